/* test_executor.c - the simulator: memory kinds over several steps, lazy
 * loading, prefix tables, caches and tables, auto_dim, control flow,
 * yield/await, node-by-node iteration and the trace. Every expected value is
 * computed by hand in the comments next to it. */
#include "../openinfer.h"
#include "check.h"

#include <stdlib.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

static char model_path[256];

/* Writes the writer to a temp file and opens it. */
static oi_model *open_written(oi_writer *w, const char *name) {
    snprintf(model_path, sizeof model_path, "/tmp/oi_test_executor_%s_%d.oinf", name, (int)getpid());
    oi_status st = oi_writer_write_file(w, 2, model_path);
    CHECK_MSG(st == OI_OK, "write %s: %s", model_path, oi_last_error());
    oi_writer_free(w);
    oi_model *m = oi_model_open(model_path);
    CHECK_MSG(m != NULL, "open %s: %s", model_path, oi_last_error());
    remove(model_path); /* the mapping stays valid */
    return m;
}

static void add_f32(oi_writer *w, const char *name, uint32_t ndim, const uint64_t *dims, const float *data) {
    CHECK_OK(oi_writer_add_tensor(w, name, OI_DTYPE_F32, ndim, dims, data, NULL));
}

static oi_executor *make_exec(oi_simulator **sim, const oi_model *m, const oi_graph *g, bool trace) {
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = OI_DEVICE_CPU;
    desc.trace = trace;
    *sim = oi_simulator_new_desc(m, &desc);
    CHECK_MSG(*sim != NULL, "simulator: %s", oi_last_error());
    if (!*sim)
        return NULL;
    oi_executor *e = oi_simulator_make_executor(*sim, g);
    CHECK_MSG(e != NULL, "make_executor: %s", oi_last_error());
    return e;
}

static void check_f32(oi_executor *e, const char *name, const float *want, size_t n, double tol) {
    oi_tensor_view v;
    oi_status st = oi_executor_fetch(e, name, OI_DTYPE_F32, &v);
    CHECK_MSG(st == OI_OK, "fetch %s: %s", name, oi_last_error());
    if (st != OI_OK)
        return;
    CHECK_MSG(v.len == n, "%s: len %zu, want %zu", name, v.len, n);
    for (size_t i = 0; i < n && i < v.len; i++)
        CHECK_MSG(fabs(((const float *)v.data)[i] - want[i]) <= tol, "%s[%zu] = %.9g, want %.9g", name, i,
                  (double)((const float *)v.data)[i], (double)want[i]);
}

static int64_t fetch_i64(oi_executor *e, const char *name) {
    oi_tensor_view v;
    oi_status st = oi_executor_fetch(e, name, OI_DTYPE_I64, &v);
    CHECK_MSG(st == OI_OK && v.len == 1, "fetch %s: %s", name, oi_last_error());
    return st == OI_OK && v.len ? ((const int64_t *)v.data)[0] : -999;
}

static void expect_invalid(const oi_dsl_stmt *stmts, const oi_model *m, const char *where, const char *why);

/* json read back into a graph and written again: the same text. Returns
 * the graph read (the caller frees it); NULL when json is NULL or does not
 * read. */
static oi_graph *check_json_round_trip(const char *json) {
    oi_graph *back = json ? oi_graph_from_json(json) : NULL;
    char *again = back ? oi_graph_to_json(back) : NULL;
    CHECK(json && again && strcmp(json, again) == 0);
    oi_free(again);
    return back;
}

/* Where one_op_graph's op writes: into its input, a volatile variable or a
 * temporary. */
typedef enum { INTO_INPUT, INTO_VOLATILE, INTO_TEMP } one_op_into;

/* The graph that most validation mistakes need: `input` declared in the
 * dynamic section, `out` (a declaration; unused for INTO_INPUT) and one op
 * `op(args)` writing the first name of `out` (or of `input`). Statements are
 * numbered from 1, the op and its OI_TO on one line as OI_GRAPH numbers
 * them, so the op stands at line 5 (into the input), 6 (a temporary) or 8
 * (a volatile variable). The statements are static: valid until the next
 * call. */
static const oi_dsl_stmt *one_op_graph(const char *input, one_op_into into, const char *out, oi_op op, const char *args) {
    static oi_dsl_stmt s[16];
    static char to[32];
    const char *target = into == INTO_INPUT ? input : out;
    snprintf(to, sizeof to, "%.*s", (int)strcspn(target, ","), target);
    int n = 0, line = 1;
#define ONE_OP_STMT(kind, head, text, id) (s[n++] = (oi_dsl_stmt){kind, line++, head, text, id})
    ONE_OP_STMT(OI_DSL_SECTION_DYNAMIC, "", "", 0);
    ONE_OP_STMT(OI_DSL_VAR, "", input, 0);
    ONE_OP_STMT(OI_DSL_SECTION_END, "", "", 0);
    if (into == INTO_VOLATILE) {
        ONE_OP_STMT(OI_DSL_SECTION_VOLATILE, "", "", 0);
        ONE_OP_STMT(OI_DSL_VAR, "", out, 0);
        ONE_OP_STMT(OI_DSL_SECTION_END, "", "", 0);
    }
    ONE_OP_STMT(OI_DSL_BLOCK, "entry", "", 0);
    if (into == INTO_TEMP)
        ONE_OP_STMT(OI_DSL_ASSIGN, "", out, 0);
    ONE_OP_STMT(OI_DSL_OP, oi_op_name(op), args, (int)op);
    line--; /* OI_TO stands on the op's line */
    ONE_OP_STMT(OI_DSL_TO, "", to, 0);
    ONE_OP_STMT(OI_DSL_RETURN, "", "", 0);
    ONE_OP_STMT(OI_DSL_BLOCK_END, "entry", "", 0);
    ONE_OP_STMT(OI_DSL_END, "", "", 0);
#undef ONE_OP_STMT
    return s;
}

/* ------------------------------------------------------------------ */
/* sizes from the model in op settings: one graph, two sequence lengths */
/* ------------------------------------------------------------------ */

OI_GRAPH(g_sizes_in_settings,
  OI_DYNAMIC(
    OI_VAR(x, f32[S, H*Dh])
  )
  OI_VOLATILE(
    OI_VAR(heads, f32[1, S, H, Dh])
    OI_VAR(flat, f32[S*4]) /* H*Dh = 4 */
    OI_VAR(tail, f32[S, Dh])
    OI_VAR(best, f32[K])
    OI_VAR(best2, f32[2*K])
  )
  OI_BLOCK(entry,
    OI_OP(reshape, x, shape=[-1, S, H, Dh]) OI_TO(heads)
    OI_OP(reshape, x, shape=[S*H*Dh]) OI_TO(flat)
    OI_OP(slice, x, starts=[0, 0], ends=[S, 1*Dh]) OI_TO(tail)
    OI_OP(top_k, flat, k=K) OI_TO(best)
    OI_OP(top_k, flat, k=K*H) OI_TO(best2)
    OI_RETURN()
  )
)

static oi_model *sizes_model(int64_t seq) {
    oi_writer *w = oi_writer_new();
    CHECK_OK(oi_writer_add_sizevar(w, "S", (uint64_t)seq));
    CHECK_OK(oi_writer_add_sizevar(w, "H", 2));
    CHECK_OK(oi_writer_add_sizevar(w, "Dh", 2));
    CHECK_OK(oi_writer_add_sizevar(w, "K", 2));
    return open_written(w, seq == 3 ? "sizes3" : "sizes2");
}

/* Each setting above names the model's sizes; with S = 3 and then S = 2 the
 * same graph runs, x[i][j] = 4i + j (H*Dh = 4 columns). */
static void test_sizes_in_settings(void) {
    static const float want_tail3[6] = {0, 1, 4, 5, 8, 9}, want_tail2[4] = {0, 1, 4, 5};
    static const float want_best3[2] = {11, 10}, want_best2_3[4] = {11, 10, 9, 8};
    static const float want_best2[2] = {7, 6}, want_best2_2[4] = {7, 6, 5, 4};
    for (int64_t seq = 3; seq >= 2; seq--) {
        oi_model *m = sizes_model(seq);
        oi_simulator *sim;
        oi_executor *e = make_exec(&sim, m, g_sizes_in_settings(), false);
        if (e) {
            float x[12];
            for (int i = 0; i < 12; i++)
                x[i] = (float)i;
            CHECK_OK(OI_TRY_INSERT(e, x, x, (size_t)(seq * 4)));
            CHECK_OK(oi_executor_run_step(e));
            oi_tensor_view v;
            CHECK_OK(oi_executor_fetch(e, "heads", OI_DTYPE_F32, &v));
            CHECK(v.ndim == 4 && v.shape[0] == 1 && v.shape[1] == seq && v.shape[2] == 2 && v.shape[3] == 2);
            CHECK_OK(oi_executor_fetch(e, "flat", OI_DTYPE_F32, &v));
            CHECK(v.ndim == 1 && v.shape[0] == seq * 4);
            check_f32(e, "tail", seq == 3 ? want_tail3 : want_tail2, (size_t)(seq * 2), 0);
            check_f32(e, "best", seq == 3 ? want_best3 : want_best2, 2, 0);
            check_f32(e, "best2", seq == 3 ? want_best2_3 : want_best2_2, 4, 0);
        }
        oi_executor_free(e);
        oi_simulator_free(sim);
        oi_model_close(m);
    }
    /* the graph keeps the names: description, JSON (round trip) */
    const oi_graph *g = g_sizes_in_settings();
    char *json = g ? oi_graph_to_json(g) : NULL;
    CHECK_STR_CONTAINS(json, "{\"name\": \"shape\", \"type\": \"int_list\", \"value\": [-1, \"S\", \"H\", \"Dh\"]}");
    CHECK_STR_CONTAINS(json, "{\"name\": \"ends\", \"type\": \"int_list\", \"value\": [\"S\", \"1*Dh\"]}");
    CHECK_STR_CONTAINS(json, "{\"name\": \"k\", \"type\": \"size\", \"value\": \"K*H\"}");
    CHECK_STR_CONTAINS(json, "{\"name\": \"k\", \"type\": \"ident\", \"value\": \"K\"}");
    oi_graph *copy = check_json_round_trip(json);
    CHECK_MSG(copy != NULL, "from_json: %s", oi_last_error());
    oi_graph_free(copy);
    oi_free(json);
    char *dot = g ? oi_graph_to_dot(g) : NULL;
    CHECK_STR_CONTAINS(dot, "shape=[-1,S,H,Dh]");
    oi_free(dot);
}

/* Mistakes with sizes in settings, each named at its line. */
static void test_sizes_in_settings_errors(void) {
    oi_model *m = sizes_model(3);
    /* x into a volatile y: the op at line 8 */
    expect_invalid(one_op_graph("x, f32[S, 4]", INTO_VOLATILE, "y, f32[S, 4]", OI_OP_slice, "x, starts=[0], ends=[Q]"), m,
                   "bad.c:8: error:", "setting ends: unknown size 'Q'");
    CHECK(strstr(oi_last_error(), "dtype") == NULL);
    expect_invalid(one_op_graph("x, f32[12]", INTO_VOLATILE, "y, f32[4]", OI_OP_top_k, "x, k=K*Z"), m, "bad.c:8: error:",
                   "setting k=K*Z: unknown size 'Z'");
    expect_invalid(one_op_graph("x, f32[12]", INTO_VOLATILE, "y, f32[4]", OI_OP_top_k, "x, k=Kk"), m, "bad.c:8: error:",
                   "'Kk' names no scalar model tensor, metadata entry, size");
    expect_invalid(one_op_graph("x, f32[12]", INTO_VOLATILE, "y, f32[12]", OI_OP_reshape, "x, shape=[-S]"), m,
                   "bad.c:8: error:", "a size cannot be negated");
    oi_model_close(m);
}

/* ------------------------------------------------------------------ */
/* warnings at validation, errors in strict mode                       */
/* ------------------------------------------------------------------ */

static const int lenient_relu_line = __LINE__ + 12, lenient_wq_line = __LINE__ + 5;
OI_GRAPH(g_lenient,
  OI_DYNAMIC( OI_VAR(x, f32[4]) )
  OI_VOLATILE(
    OI_VAR(a, f32[4])                /* in the model */
    OI_VAR(Wqq, f32[4])              /* misspelled: the model has Wq */
    OI_VAR(bias, f32[4], @init(0.5)) /* @init */
    OI_VAR(scratch, f32[4])          /* written before it is read */
    OI_VAR(unused, f32[4])           /* never read: no warning */
  )
  OI_BLOCK(entry,
    OI_OP(add, x, a) OI_TO(scratch)
    OI_OP(relu, scratch, negative_slop=0.5) OI_TO(scratch)
    OI_OP(add, scratch, Wqq) OI_TO(scratch)
    OI_OP(add, scratch, bias) OI_TO(scratch)
    OI_RETURN()
  )
)

static oi_model *lenient_model(void) {
    oi_writer *w = oi_writer_new();
    float a[4] = {1, -2, 3, -4}, wq[4] = {9, 9, 9, 9};
    uint64_t dims[1] = {4};
    add_f32(w, "a", 1, dims, a);
    add_f32(w, "Wq", 1, dims, wq);
    return open_written(w, "lenient");
}

static void test_lenient_and_strict(void) {
    oi_model *m = lenient_model();
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, m, g_lenient(), false);
    if (e) {
        CHECK_EQ_INT(oi_executor_warning_count(e), 2);
        char want[512];
        snprintf(want, sizeof want, "%s:%d: warning: OI_OP(relu, scratch, negative_slop=0.5) OI_TO(scratch): op relu has no "
                 "setting 'negative_slop' (expected: ", __FILE__, lenient_relu_line);
        CHECK_STR_CONTAINS(oi_executor_warning(e, 0), want);
        CHECK_STR_CONTAINS(oi_executor_warning(e, 0), "negative_slope");
        CHECK_STR_CONTAINS(oi_executor_warning(e, 0), "it is kept but not used (strict mode makes it an error)");
        snprintf(want, sizeof want, "%s:%d: warning: OI_VAR(Wqq, f32[4]): Wqq is not in the model, has no @init and nothing "
                 "writes it: it reads as zeros", __FILE__, lenient_wq_line);
        CHECK_STR_CONTAINS(oi_executor_warning(e, 1), want);
        /* it runs as warned: relu with its defaults, Wqq zeros */
        float x[4] = {1, 1, 1, 1}, want_y[4] = {2.5f, 0.5f, 4.5f, 0.5f};
        CHECK_OK(OI_TRY_INSERT(e, x, x, 4));
        CHECK_OK(oi_executor_run_step(e));
        check_f32(e, "scratch", want_y, 4, 0);
        CHECK_OK(oi_executor_run_step(e)); /* warned once, not per step */
        CHECK_EQ_INT(oi_executor_warning_count(e), 2);
    }
    oi_executor_free(e);
    /* strict: the first of them is an error at its line */
    setenv("OPENINFER_STRICT", "1", 1);
    CHECK(oi_simulator_make_executor(sim, g_lenient()) == NULL);
    char want[256];
    snprintf(want, sizeof want, "%s:%d: error: OI_OP(relu, scratch, negative_slop=0.5) OI_TO(scratch): op relu has no setting "
             "'negative_slop'", __FILE__, lenient_relu_line);
    CHECK_STR_CONTAINS(oi_last_error(), want);
    CHECK_STR_CONTAINS(oi_last_error(), "strict mode)");
    CHECK_STATUS(oi_graph_validate(g_lenient(), m), OI_ERROR_VALIDATION);
    unsetenv("OPENINFER_STRICT");
    CHECK_OK(oi_graph_validate(g_lenient(), m));
    oi_simulator_free(sim);
    oi_model_close(m);
}

/* The same mistakes in a strict graph, through the function API. */
static void test_strict_graph(void) {
    oi_model *m = lenient_model();
    for (int variant = 0; variant < 2; variant++) {
        oi_graph_builder *b = oi_graph_builder_new("strict", "strict.c");
        oi_graph_builder_stmt(b, OI_DSL_STRICT, "", "");
        oi_graph_builder_section(b, OI_DSL_SECTION_DYNAMIC);
        oi_graph_builder_var(b, "x, f32[4]");
        oi_graph_builder_end(b);
        oi_graph_builder_section(b, OI_DSL_SECTION_VOLATILE);
        oi_graph_builder_var(b, variant ? "Wq, f32[4]" : "Wqq, f32[4]"); /* line 6 */
        oi_graph_builder_end(b);
        oi_graph_builder_block(b, "entry");
        oi_graph_builder_op(b, "add", variant ? "x, Wq" : "x, Wqq", "x");
        oi_graph_builder_stmt(b, OI_DSL_RETURN, "", "");
        oi_graph_builder_end(b);
        oi_graph *g = oi_graph_builder_finish(b);
        CHECK_MSG(g != NULL, "%s", oi_last_error());
        if (variant == 0) {
            CHECK_STATUS(oi_graph_validate(g, m), OI_ERROR_VALIDATION);
            CHECK_STR_CONTAINS(oi_last_error(), "strict.c:6: error: OI_VAR(Wqq, f32[4]): Wqq is not in the model, has no "
                                                "@init and nothing writes it: it reads as zeros (a misspelled name?; strict mode)");
        } else {
            CHECK_OK(oi_graph_validate(g, m));
        }
        oi_graph_free(g);
    }
    oi_model_close(m);
}

/* ------------------------------------------------------------------ */
/* scalar literals as op inputs                                         */
/* ------------------------------------------------------------------ */

OI_GRAPH(g_literals,
  OI_DYNAMIC( OI_VAR(x, f32[4])  OI_VAR(n, i32[4])  OI_VAR(h, f16[4]) )
  OI_VOLATILE(
    OI_VAR(sq, f32[4]) OI_VAR(m, i32[4]) OI_VAR(hh, f16[4]) OI_VAR(pos, bool[4]) OI_VAR(clipped, f32[4])
  )
  OI_BLOCK(entry,
    OI_OP(pow, x, 2.0) OI_TO(sq)
    OI_OP(add, sq, 2.0) OI_TO(sq)
    OI_OP(mul, n, -3) OI_TO(m)
    OI_OP(add, h, 1) OI_TO(hh)
    OI_OP(gt, x, 0) OI_TO(pos)
    OI_OP(where, pos, x, 0.5) OI_TO(clipped)
    OI_RETURN()
  )
)

static void test_literal_inputs(void) {
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, NULL, g_literals(), false);
    if (e) {
        float x[4] = {-2, -0.5f, 1, 3}, h[4] = {0.5f, -1, 2, 7};
        int32_t n[4] = {1, -2, 3, 100};
        CHECK_OK(OI_TRY_INSERT(e, x, x, 4));
        CHECK_OK(OI_TRY_INSERT(e, n, n, 4));
        CHECK_OK(OI_TRY_INSERT(e, h, h, 4));
        CHECK_OK(oi_executor_run_step(e));
        static const float want_sq[4] = {6, 2.25f, 3, 11}, want_hh[4] = {1.5f, 0, 3, 8}, want_clip[4] = {0.5f, 0.5f, 1, 3};
        static const float want_m[4] = {-3, 6, -9, -300}, want_pos[4] = {0, 0, 1, 1};
        check_f32(e, "sq", want_sq, 4, 0);
        check_f32(e, "m", want_m, 4, 0);
        check_f32(e, "hh", want_hh, 4, 0);
        check_f32(e, "pos", want_pos, 4, 0);
        check_f32(e, "clipped", want_clip, 4, 0);
        oi_tensor_view v;
        CHECK_OK(oi_executor_fetch(e, "m", OI_DTYPE_I32, &v)); /* the literal took n's dtype: i32 */
        CHECK(v.dtype == OI_DTYPE_I32 && ((const int32_t *)v.data)[3] == -300);
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
    /* the graph keeps the literal as written */
    char *json = oi_graph_to_json(g_literals());
    CHECK_STR_CONTAINS(json, "\"inputs\": [{\"name\": \"x\"}, {\"name\": \"2.0\", \"literal\": true}]");
    CHECK_STR_CONTAINS(json, "{\"name\": \"-3\", \"literal\": true}");
    oi_graph_free(check_json_round_trip(json));
    const char *at = json ? strstr(json, "\"2.0\", \"literal\"") : NULL;
    CHECK(at != NULL);
    if (at) { /* "2.0" -> "two" */
        memcpy(json + (at - json) + 1, "two", 3);
        oi_clear_error();
        CHECK(oi_graph_from_json(json) == NULL);
    }
    oi_free(json);
    CHECK_STR_CONTAINS(oi_last_error(), "literal \"two\" is not a number");
    /* mistakes, at their lines */
    expect_invalid(one_op_graph("n, i32[4]", INTO_INPUT, NULL, OI_OP_mul, "n, 2.5"), NULL, "bad.c:5: error:",
                   "literal 2.5: a float value for i32 inputs");
    expect_invalid(one_op_graph("q, i8[4]", INTO_INPUT, NULL, OI_OP_add, "q, 300"), NULL, "bad.c:5: error:",
                   "literal 300 does not fit i8");
}

/* ------------------------------------------------------------------ */
/* the minimal graph of the spec; per-step reset of volatile/dynamic   */
/* ------------------------------------------------------------------ */

OI_GRAPH(g_minimal,
  OI_DYNAMIC(
    OI_VAR(x, f32[B])
  )
  OI_VOLATILE(
    OI_VAR(a, f32[B])
    OI_VAR(y, f32[B], @init(5.0))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(t0, f32[B])
    OI_OP(add, x, a) OI_TO(t0)
    OI_OP(mul, y, t0) OI_TO(y)
    OI_RETURN()
  )
)

static oi_model *minimal_model(void) {
    oi_writer *w = oi_writer_new();
    CHECK_OK(oi_writer_add_sizevar(w, "B", 4));
    float a[4] = {0.5f, 1.0f, -2.0f, 10.0f};
    uint64_t dims[1] = {4};
    add_f32(w, "a", 1, dims, a);
    return open_written(w, "minimal");
}

static void test_minimal(void) {
    oi_model *m = minimal_model();
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, m, g_minimal(), false);
    if (!e)
        return;
    float x1[4] = {1, 2, 3, 4};
    CHECK_OK(OI_TRY_INSERT(e, x, x1, 4));
    CHECK_OK(oi_executor_run_step(e));
    /* y = 5 * (x + a) = 5 * [1.5, 3, 1, 14] */
    float y1[4] = {7.5f, 15.0f, 5.0f, 70.0f};
    check_f32(e, "y", y1, 4, 0);
    float t1[4] = {1.5f, 3.0f, 1.0f, 14.0f};
    check_f32(e, "t0", t1, 4, 0);

    /* step 2: y starts again from @init(5.0), not from 7.5... */
    float x2[4] = {-1, 0, 2, 0};
    CHECK_OK(OI_TRY_INSERT(e, x, x2, 4));
    CHECK_OK(oi_executor_run_step(e));
    float y2[4] = {-2.5f, 5.0f, 0.0f, 50.0f}; /* 5 * [-0.5, 1, 0, 10] */
    check_f32(e, "y", y2, 4, 0);

    /* step 3 without an insert: x is cleared (zeros), y = 5 * a */
    CHECK_OK(oi_executor_run_step(e));
    float y3[4] = {2.5f, 5.0f, -10.0f, 50.0f};
    check_f32(e, "y", y3, 4, 0);
    float x3[4] = {0, 0, 0, 0};
    check_f32(e, "x", x3, 4, 0);

    /* OI_FETCH / OI_TRY_FETCH macros */
    OI_FETCH(e, y, f32);
    CHECK_EQ_INT(y.len, 4);
    CHECK_EQ_INT(y.ndim, 1);
    CHECK_EQ_INT(y.shape[0], 4);
    CHECK_NEAR(y.data[2], -10.0, 0);
    oi_status st;
    OI_TRY_FETCH(e, a, f64, &st);
    CHECK_OK(st);
    CHECK_NEAR(a.data[3], 10.0, 0);

    /* bad input: wrong count, unknown variable, wrong dtype; still usable */
    CHECK_STATUS(OI_TRY_INSERT(e, x, x1, 3), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(oi_last_error(), "expected 4, got 3");
    CHECK_STATUS(oi_executor_insert(e, "nope", OI_DTYPE_F32, x1, 4), OI_ERROR_NOT_FOUND);
    CHECK_STR_CONTAINS(oi_last_error(), "nope");
    CHECK_STATUS(oi_executor_insert(e, "a_missing", OI_DTYPE_F32, x1, 4), OI_ERROR_NOT_FOUND);
    oi_tensor_view v;
    CHECK_STATUS(oi_executor_fetch(e, "y", OI_DTYPE_I32, &v), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(oi_last_error(), "expected i32, got f32");
    int32_t xi[4] = {1, 2, 3, 4}; /* integers convert losslessly into f32 */
    CHECK_OK(OI_TRY_INSERT_T(e, x, i32, xi, 4));
    CHECK_OK(oi_executor_run_step(e));
    check_f32(e, "y", y1, 4, 0);

    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
}

/* ------------------------------------------------------------------ */
/* memory kinds over several steps                                     */
/* ------------------------------------------------------------------ */

OI_GRAPH(g_kinds,
  OI_DYNAMIC( OI_VAR(x, f32[4]) )
  OI_VOLATILE( OI_VAR(v, f32[4], @init(1.0)) )
  OI_CONSTANT( OI_VAR(c, f32[4]) )
  OI_PERSISTENT(
    OI_VAR(step, i32, @init(0))
    OI_VAR(acc, f32[4])
  )
  OI_BLOCK(entry,
    OI_ASSIGN(t, f32[4])
    OI_ASSIGN(s, f32[4])
    OI_OP(add, t, x) OI_TO(t)
    OI_OP(add, v, t) OI_TO(v)
    OI_CACHE_READ(acc, s)
    OI_OP(add, s, c) OI_TO(s)
    OI_OP(add, s, x) OI_TO(s)
    OI_CACHE_WRITE(s, acc)
    OI_CACHE_INCREMENT(step)
    OI_RETURN()
  )
)

static void test_memory_kinds(void) {
    oi_writer *w = oi_writer_new();
    float c[4] = {100, 200, 300, 400};
    uint64_t dims[1] = {4};
    add_f32(w, "c", 1, dims, c);
    oi_model *m = open_written(w, "kinds");
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, m, g_kinds(), false);
    if (!e)
        return;
    float x1[4] = {1, 2, 3, 4}, x2[4] = {10, 20, 30, 40};
    CHECK_EQ_INT(fetch_i64(e, "step"), 0); /* @init before any step */
    CHECK_OK(OI_TRY_INSERT(e, x, x1, 4));
    CHECK_OK(oi_executor_run_step(e));
    /* t = 0 + x; v = 1 + t; acc = 0 + c + x */
    float t1[4] = {1, 2, 3, 4}, v1[4] = {2, 3, 4, 5}, acc1[4] = {101, 202, 303, 404};
    check_f32(e, "t", t1, 4, 0);
    check_f32(e, "v", v1, 4, 0);
    check_f32(e, "acc", acc1, 4, 0);
    CHECK_EQ_INT(fetch_i64(e, "step"), 1);

    CHECK_OK(OI_TRY_INSERT(e, x, x2, 4));
    CHECK_OK(oi_executor_run_step(e));
    /* temporaries and volatile restart: t = x2, v = 1 + x2; acc keeps growing */
    float v2[4] = {11, 21, 31, 41}, acc2[4] = {211, 422, 633, 844};
    check_f32(e, "t", x2, 4, 0);
    check_f32(e, "v", v2, 4, 0);
    check_f32(e, "acc", acc2, 4, 0);
    CHECK_EQ_INT(fetch_i64(e, "step"), 2);

    CHECK_OK(oi_executor_run_step(e)); /* x cleared: acc += c */
    float acc3[4] = {311, 622, 933, 1244}, v3[4] = {1, 1, 1, 1};
    check_f32(e, "acc", acc3, 4, 0);
    check_f32(e, "v", v3, 4, 0);
    check_f32(e, "c", c, 4, 0);
    CHECK_EQ_INT(fetch_i64(e, "step"), 3);

    /* inserts into constant or persistent memory are refused */
    CHECK_STATUS(OI_TRY_INSERT(e, c, x1, 4), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(oi_last_error(), "constant");
    CHECK_STATUS(OI_TRY_INSERT(e, acc, x1, 4), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(oi_last_error(), "persistent");
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
}

/* ------------------------------------------------------------------ */
/* lazy loading                                                        */
/* ------------------------------------------------------------------ */

OI_GRAPH(g_lazy,
  OI_VOLATILE( OI_VAR(w2, f32[64]) OI_VAR(out, f32[64]) )
  OI_BLOCK(entry,
    OI_OP(add, w2, w2) OI_TO(out)
    OI_RETURN()
  )
)

static void test_lazy_loading(void) {
    oi_writer *w = oi_writer_new();
    float data[64];
    uint64_t dims[1] = {64};
    for (int t = 0; t < 4; t++) {
        char name[8];
        snprintf(name, sizeof name, "w%d", t);
        for (int i = 0; i < 64; i++)
            data[i] = (float)(t * 100 + i);
        add_f32(w, name, 1, dims, data);
    }
    oi_model *m = open_written(w, "lazy");
    CHECK_EQ_INT(oi_model_loaded_tensor_count(m), 0);
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, m, g_lazy(), false);
    if (!e)
        return;
    CHECK_EQ_INT(oi_model_loaded_tensor_count(m), 0); /* validation reads no payload */
    CHECK_OK(oi_executor_run_step(e));
    CHECK_EQ_INT(oi_model_loaded_tensor_count(m), 1); /* only w2 */
    CHECK_OK(oi_executor_run_step(e));
    CHECK_EQ_INT(oi_model_loaded_tensor_count(m), 1);
    float want[64];
    for (int i = 0; i < 64; i++)
        want[i] = 2.0f * (float)(200 + i);
    check_f32(e, "out", want, 64, 0);
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
}

/* ------------------------------------------------------------------ */
/* prefix tables                                                       */
/* ------------------------------------------------------------------ */

OI_GRAPH(g_prefix,
  OI_DYNAMIC( OI_VAR(h, f32[1, 2]) )
  OI_VOLATILE( OI_VAR(W(l), f32[2, 2], @pattern("W.{l}")) )
  OI_CONSTANT( OI_VAR(QKV(layer, head), f32[1], @pattern("attn.{head}.qkv.{layer}")) )
  OI_BLOCK(entry,
    OI_ASSIGN(s, f32[1])
    OI_LOOP(layers, l, 0..num_layers,
      OI_OP(matmul, h, W[l]) OI_TO(h)
    )
    OI_LOOP(outer, i, 0..2,
      OI_LOOP(inner, j, 0..2,
        OI_OP(add, s, QKV[i, j]) OI_TO(s)
      )
    )
    OI_OP(add, s, QKV[1, 0]) OI_TO(s)
    OI_RETURN()
  )
)

static void test_prefix_tables(void) {
    oi_writer *w = oi_writer_new();
    CHECK_OK(oi_writer_add_sizevar(w, "num_layers", 4));
    uint64_t d22[2] = {2, 2}, d1[1] = {1};
    for (int l = 0; l < 4; l++) { /* W.l = [[1, l], [0, 1]] */
        char name[16];
        snprintf(name, sizeof name, "W.%d", l);
        float wl[4] = {1, (float)l, 0, 1};
        add_f32(w, name, 2, d22, wl);
    }
    for (int layer = 0; layer < 2; layer++)
        for (int head = 0; head < 2; head++) { /* attn.{head}.qkv.{layer} = 10*layer + head */
            char name[32];
            snprintf(name, sizeof name, "attn.%d.qkv.%d", head, layer);
            float v = (float)(10 * layer + head);
            add_f32(w, name, 1, d1, &v);
        }
    oi_model *m = open_written(w, "prefix");
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, m, g_prefix(), false);
    if (!e)
        return;
    float h0[2] = {1, 1};
    CHECK_OK(OI_TRY_INSERT(e, h, h0, 2));
    CHECK_OK(oi_executor_run_step(e));
    /* [a, b] @ [[1, l], [0, 1]] = [a, a*l + b]: b = 1, 2, 4, 7 */
    float h_want[2] = {1, 7};
    check_f32(e, "h", h_want, 2, 0);
    /* s = (0 + 1 + 10 + 11) + 10 = 32 */
    float s_want[1] = {32};
    check_f32(e, "s", s_want, 1, 0);
    /* each model tensor was loaded once: 4 W + 4 QKV */
    CHECK_EQ_INT(oi_model_loaded_tensor_count(m), 8);
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
}

/* ------------------------------------------------------------------ */
/* a KV-cache decode loop over several steps                           */
/* ------------------------------------------------------------------ */

OI_GRAPH(g_kv,
  OI_DYNAMIC( OI_VAR(x, f32[2]) )
  OI_CONSTANT( OI_VAR(S(l), f32[2], @pattern("scale.{l}")) )
  OI_PERSISTENT(
    OI_VAR(step, i32, @init(0))
    OI_VAR(K(l, t), f32[2], @table)
    OI_VAR(T(l), f32[2], @table)
  )
  OI_BLOCK(entry,
    OI_ASSIGN(k, f32[2])
    OI_ASSIGN(hist, f32[1, 2])
    OI_ASSIGN(tot, f32[2])
    OI_LOOP(layers, l, 0..2,
      OI_OP(mul, x, S[l]) OI_TO(k)
      OI_CACHE_WRITE(k, K[l, step])
    )
    OI_CACHE_INCREMENT(step)
    OI_LOOP(layers2, l, 0..2,
      OI_CACHE_READ(K[l, 0..step], hist)
      OI_OP(sum_axis, hist, axes=[0]) OI_TO(tot)
      OI_CACHE_WRITE(tot, T[l])
    )
    OI_RETURN()
  )
)

static void test_kv_cache(void) {
    oi_writer *w = oi_writer_new();
    uint64_t d2[1] = {2};
    float s0[2] = {1, 1}, s1[2] = {2, 2};
    add_f32(w, "scale.0", 1, d2, s0);
    add_f32(w, "scale.1", 1, d2, s1);
    oi_model *m = open_written(w, "kv");
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, m, g_kv(), false);
    if (!e)
        return;
    float xs[3][2] = {{1, 2}, {3, 4}, {5, 6}};
    CHECK_OK(OI_TRY_INSERT(e, x, xs[0], 2));
    CHECK_OK(oi_executor_run_step(e));
    /* after step 1, layer 1: hist = [[2, 4]] */
    float hist1[2] = {2, 4};
    check_f32(e, "hist", hist1, 2, 0);
    oi_tensor_view v;
    CHECK_OK(oi_executor_fetch(e, "hist", OI_DTYPE_F32, &v));
    CHECK_EQ_INT(v.ndim, 2);
    CHECK_EQ_INT(v.shape[0], 1);
    for (int s = 1; s < 3; s++) {
        CHECK_OK(OI_TRY_INSERT(e, x, xs[s], 2));
        CHECK_OK(oi_executor_run_step(e));
    }
    CHECK_EQ_INT(fetch_i64(e, "step"), 3);
    /* K[1, t] = 2 * x_t: hist = [[2,4],[6,8],[10,12]], tot = [18, 24] */
    float hist3[6] = {2, 4, 6, 8, 10, 12};
    check_f32(e, "hist", hist3, 6, 0);
    CHECK_OK(oi_executor_fetch(e, "hist", OI_DTYPE_F32, &v));
    CHECK_EQ_INT(v.shape[0], 3);
    CHECK_EQ_INT(v.shape[1], 2);
    /* T = [[9, 12], [18, 24]]; K stacked = [2 layers, 3 steps, 2] */
    float T[4] = {9, 12, 18, 24};
    check_f32(e, "T", T, 4, 0);
    float K[12] = {1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12};
    check_f32(e, "K", K, 12, 0);
    CHECK_OK(oi_executor_fetch(e, "K", OI_DTYPE_F32, &v));
    CHECK_EQ_INT(v.ndim, 3);
    CHECK_EQ_INT(v.shape[1], 3);
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
}

/* ------------------------------------------------------------------ */
/* slices with the seed's semantics; cache.reset; @fixed overflow      */
/* ------------------------------------------------------------------ */

OI_GRAPH(g_slices,
  OI_DYNAMIC( OI_VAR(v, f32[2]) )
  OI_PERSISTENT(
    OI_VAR(n, i32, @init(0))
    OI_VAR(A(i), f32[2], @table)
  )
  OI_BLOCK(entry,
    OI_ASSIGN(all, f32[1, 2])
    OI_ASSIGN(s05, f32[1, 2])
    OI_ASSIGN(s25, f32[1, 2])
    OI_ASSIGN(sm3, f32[1, 2])
    OI_ASSIGN(one, f32[2])
    OI_CACHE_WRITE(v, A[n])
    OI_CACHE_INCREMENT(n)
    OI_CACHE_READ(A[], all)
    OI_CACHE_READ(A[0..5], s05)
    OI_CACHE_READ(A[2..5], s25)
    OI_CACHE_READ(A[0..-3], sm3)
    OI_CACHE_READ(A[3], one)
    OI_RETURN()
  )
)

/* `steps` steps, each inserting v = [i, -i] at step i: the rows check_rows
 * expects. */
static void run_rows(oi_executor *e, int steps) {
    for (int i = 0; i < steps; i++) {
        float v[2] = {(float)i, (float)-i};
        CHECK_OK(OI_TRY_INSERT(e, v, v, 2));
        CHECK_OK(oi_executor_run_step(e));
    }
}

static void check_rows(oi_executor *e, const char *name, int first, int count) {
    oi_tensor_view v;
    oi_status st = oi_executor_fetch(e, name, OI_DTYPE_F32, &v);
    CHECK_MSG(st == OI_OK, "fetch %s: %s", name, oi_last_error());
    if (st != OI_OK)
        return;
    CHECK_MSG(v.ndim == 2 && v.shape[0] == count && v.shape[1] == 2, "%s: shape [%lld, %lld], want [%d, 2]", name,
              (long long)v.shape[0], (long long)v.shape[1], count);
    for (int r = 0; r < count && (size_t)(2 * r + 1) < v.len; r++) { /* row i holds [i, -i] */
        CHECK_NEAR(((const float *)v.data)[2 * r], first + r, 0);
        CHECK_NEAR(((const float *)v.data)[2 * r + 1], -(first + r), 0);
    }
}

static void test_slices(void) {
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, NULL, g_slices(), false);
    if (!e)
        return;
    run_rows(e, 10);
    /* 10 entries: A[] -> [10, 2]; A[0..5] -> [5, 2]; A[2..5] -> rows 2,3,4;
     * A[0..-3] -> rows 0..6 (7 rows); A[3] -> [3, -3] */
    check_rows(e, "all", 0, 10);
    check_rows(e, "s05", 0, 5);
    check_rows(e, "s25", 2, 3);
    check_rows(e, "sm3", 0, 7);
    float a3[2] = {3, -3};
    check_f32(e, "one", a3, 2, 0);
    oi_executor_free(e);
    oi_simulator_free(sim);
}

/* Slice bounds, indices and loop bounds as expressions of scalars and sizes,
 * evaluated at run time: one counter n instead of two. */
OI_GRAPH(g_slice_exprs,
  OI_DYNAMIC( OI_VAR(v, f32[2]) )
  OI_PERSISTENT(
    OI_VAR(n, i32, @init(0))
    OI_VAR(iters, i32, @init(0))
    OI_VAR(A(i), f32[2], @table)
  )
  OI_BLOCK(entry,
    OI_ASSIGN(upto, f32[1, 2])
    OI_ASSIGN(last, f32[1, 2])
    OI_ASSIGN(twice, f32[1, 2])
    OI_ASSIGN(prev, f32[2])
    OI_CACHE_WRITE(v, A[n])
    OI_CACHE_READ(A[0..n+1], upto)       /* n + 1 rows, this step's too */
    OI_CACHE_READ(A[n - 1 + 1..n+1], last) /* this row alone */
    OI_CACHE_READ(A[0..S*2], twice)      /* S = 2 in the model: rows 0..3 */
    OI_CACHE_READ(A[n*2-n], prev)        /* a single index: row n */
    OI_LOOP(count, i, 0..n-1+1, OI_CACHE_INCREMENT(iters))
    OI_CACHE_INCREMENT(n)
    OI_RETURN()
  )
)

static void test_slice_exprs(void) {
    oi_writer *w = oi_writer_new();
    CHECK_OK(oi_writer_add_sizevar(w, "S", 2));
    oi_model *m = open_written(w, "slice_exprs");
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, m, g_slice_exprs(), false);
    if (e) {
        run_rows(e, 5);
        /* the last step ran with n = 4: rows 0..4, row 4, rows 0..3, row 4 */
        check_rows(e, "upto", 0, 5);
        check_rows(e, "last", 4, 1);
        check_rows(e, "twice", 0, 4);
        float row4[2] = {4, -4};
        check_f32(e, "prev", row4, 2, 0);
        CHECK_EQ_INT(fetch_i64(e, "iters"), 0 + 1 + 2 + 3 + 4); /* n iterations per step */
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
    /* a start that is negative at run time: the error names the statement */
    static const oi_dsl_stmt neg[] = {
        {OI_DSL_SECTION_PERSISTENT, 1, "", "", 0}, {OI_DSL_VAR, 2, "", "n, i32, @init(0)", 0},
        {OI_DSL_VAR, 3, "", "A(i), f32[2], @table", 0}, {OI_DSL_SECTION_END, 4, "", "", 0},
        {OI_DSL_BLOCK, 5, "entry", "", 0}, {OI_DSL_ASSIGN, 6, "", "r, f32[1, 2]", 0},
        {OI_DSL_CACHE_READ, 7, "", "A[n-1..n], r", 0},
        {OI_DSL_RETURN, 8, "", "", 0}, {OI_DSL_BLOCK_END, 9, "entry", "", 0}, {OI_DSL_END, 10, "", "", 0}};
    oi_graph *g = oi_graph_build("neg", "neg.c", neg);
    CHECK_MSG(g != NULL, "build: %s", oi_last_error());
    e = g ? make_exec(&sim, m, g, false) : NULL;
    if (e) {
        CHECK(oi_executor_run_step(e) != OI_OK);
        CHECK_STR_CONTAINS(oi_last_error(), "neg.c:7: error:");
        CHECK_STR_CONTAINS(oi_last_error(), "slice -1..0");
        oi_executor_free(e);
        oi_simulator_free(sim);
    }
    /* an unknown name in an expression fails at validation, at its line */
    static const oi_dsl_stmt unknown[] = {
        {OI_DSL_SECTION_PERSISTENT, 1, "", "", 0}, {OI_DSL_VAR, 2, "", "A(i), f32[2], @table", 0},
        {OI_DSL_SECTION_END, 3, "", "", 0},
        {OI_DSL_BLOCK, 4, "entry", "", 0}, {OI_DSL_ASSIGN, 5, "", "r, f32[1, 2]", 0},
        {OI_DSL_CACHE_READ, 6, "", "A[0..step+1], r", 0},
        {OI_DSL_RETURN, 7, "", "", 0}, {OI_DSL_BLOCK_END, 8, "entry", "", 0}, {OI_DSL_END, 9, "", "", 0}};
    expect_invalid(unknown, m, "bad.c:6: error:", "slice end 'step' is not a loop variable, a model size or a scalar variable");
    oi_graph_free(g);
    oi_model_close(m);
}

/* Run-time dims: '?' says a dim is set at run time; the rank and the other
 * dims are checked at validation and at every write. */
OI_GRAPH(g_runtime_dims,
  OI_DYNAMIC( OI_VAR(v, f32[2]) )
  OI_VOLATILE( OI_VAR(cols, f32[2, ?]) )
  OI_PERSISTENT(
    OI_VAR(n, i32, @init(0))
    OI_VAR(A(i), f32[2], @table)
  )
  OI_BLOCK(entry,
    OI_ASSIGN(rows, f32[?, 2])
    OI_ASSIGN(first, f32[?, 2])
    OI_CACHE_WRITE(v, A[n])
    OI_CACHE_READ(A[0..n+1], rows)
    OI_CACHE_READ(A[0..1], first)        /* a known length also fits '?' */
    OI_OP(transpose, rows, perm=[1, 0]) OI_TO(cols)
    OI_CACHE_INCREMENT(n)
    OI_RETURN()
  )
)

static const oi_dsl_stmt *runtime_dims_graph(const char *tail_decl, const char *read, const char *section_var) {
    static char decl[64], access[64], var[64];
    snprintf(decl, sizeof decl, "%s", tail_decl);
    snprintf(access, sizeof access, "%s", read);
    snprintf(var, sizeof var, "%s", section_var);
    static oi_dsl_stmt s[] = {
        {OI_DSL_SECTION_PERSISTENT, 1, "", "", 0}, {OI_DSL_VAR, 2, "", "n, i32, @init(0)", 0},
        {OI_DSL_VAR, 3, "", "A(i), f32[2], @table", 0}, {OI_DSL_SECTION_END, 4, "", "", 0},
        {OI_DSL_SECTION_DYNAMIC, 5, "", "", 0}, {OI_DSL_VAR, 6, "", "", 0}, {OI_DSL_SECTION_END, 7, "", "", 0},
        {OI_DSL_BLOCK, 8, "entry", "", 0}, {OI_DSL_ASSIGN, 9, "", "", 0},
        {OI_DSL_CACHE_READ, 10, "", "", 0},
        {OI_DSL_RETURN, 11, "", "", 0}, {OI_DSL_BLOCK_END, 12, "entry", "", 0}, {OI_DSL_END, 13, "", "", 0}};
    s[5].text = var;
    s[8].text = decl;
    s[9].text = access;
    return s;
}

static void test_runtime_dims(void) {
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, NULL, g_runtime_dims(), false);
    if (e) {
        CHECK_EQ_INT(oi_executor_warning_count(e), 0);
        run_rows(e, 3);
        check_rows(e, "rows", 0, 3);
        check_rows(e, "first", 0, 1);
        float cols[6] = {0, 1, 2, 0, -1, -2};
        check_f32(e, "cols", cols, 6, 0);
        oi_executor_free(e);
        oi_simulator_free(sim);
    }
    /* the graph keeps '?': JSON (round trip) and DOT */
    char *json = g_runtime_dims() ? oi_graph_to_json(g_runtime_dims()) : NULL;
    CHECK_STR_CONTAINS(json, "\"dims\": [\"?\", \"2\"]");
    oi_graph *copy = check_json_round_trip(json);
    CHECK_MSG(copy != NULL, "from_json: %s", oi_last_error());
    oi_graph_free(copy);
    oi_free(json);
    char *dot = g_runtime_dims() ? oi_graph_to_dot(g_runtime_dims()) : NULL;
    CHECK_STR_CONTAINS(dot, "f32[?, 2]");
    oi_free(dot);

    /* validation: the rank and the static dims of the read */
    expect_invalid(runtime_dims_graph("r, f32[?, 3]", "A[0..n], r", "x, f32[1]"), NULL, "bad.c:10: error:",
                   "cache.read gives f32[?, 2] but r is declared f32[?, 3]");
    expect_invalid(runtime_dims_graph("r, f32[?]", "A[0..n], r", "x, f32[1]"), NULL, "bad.c:10: error:",
                   "cache.read gives f32[?, 2] but r is declared f32[?]");
    expect_invalid(runtime_dims_graph("r, f32[?, 2]", "A[n], r", "x, f32[1]"), NULL, "bad.c:10: error:",
                   "cache.read gives f32[2] but r is declared f32[?, 2]");
    expect_invalid(runtime_dims_graph("r, f32[?, 2]", "A[0..n], r", "x, f32[?]"), NULL, "bad.c:6: error:",
                   "a dim set at run time ('?') is only for temporaries (OI_ASSIGN) and volatile variables");
    /* a placeholder (no '?') where the read sets a dim at run time: a warning, or a strict error */
    oi_graph *g = oi_graph_build("bad", "bad.c", runtime_dims_graph("r, f32[1, 2]", "A[0..n], r", "x, f32[1]"));
    CHECK_MSG(g != NULL, "build: %s", oi_last_error());
    e = g ? make_exec(&sim, NULL, g, false) : NULL;
    if (e) {
        CHECK_EQ_INT(oi_executor_warning_count(e), 2); /* and: A is never written */
        CHECK_STR_CONTAINS(oi_executor_warning(e, 0), "bad.c:10: warning:");
        CHECK_STR_CONTAINS(oi_executor_warning(e, 0), "cache.read gives f32[?, 2], set at run time, but r is declared f32[1, 2]");
        oi_executor_free(e);
        oi_simulator_free(sim);
    }
    oi_graph_free(g);
    setenv("OPENINFER_STRICT", "1", 1);
    g = oi_graph_build("bad", "bad.c", runtime_dims_graph("r, f32[1, 2]", "A[0..n], r", "x, f32[1]"));
    CHECK(g && oi_graph_validate(g, NULL) == OI_ERROR_VALIDATION);
    CHECK_STR_CONTAINS(oi_last_error(), "write the run-time dims as '?' (strict mode)");
    unsetenv("OPENINFER_STRICT");
    oi_graph_free(g);

    /* an op whose result does not fit the declaration: at validation when the
     * shapes are known, at the write when they are set at run time */
    expect_invalid(one_op_graph("x, f32[3, 2]", INTO_TEMP, "t, f32[?, 3]", OI_OP_relu, "x"), NULL, "bad.c:6: error:",
                   "op relu produces f32[3, 2] but t is declared f32[?, 3]");
    static const oi_dsl_stmt op_probed[] = {
        {OI_DSL_SECTION_PERSISTENT, 1, "", "", 0}, {OI_DSL_VAR, 2, "", "n, i32, @init(3)", 0},
        {OI_DSL_VAR, 3, "", "A(i), f32[2], @table", 0}, {OI_DSL_SECTION_END, 4, "", "", 0},
        {OI_DSL_BLOCK, 5, "entry", "", 0}, {OI_DSL_ASSIGN, 6, "", "r, f32[?, 2]", 0},
        {OI_DSL_ASSIGN, 7, "", "t, f32[?, 2]", 0},
        {OI_DSL_CACHE_READ, 8, "", "A[0..n], r", 0},
        {OI_DSL_OP, 9, "transpose", "r, perm=[1, 0]", OI_OP_transpose}, {OI_DSL_TO, 9, "", "t", 0},
        {OI_DSL_RETURN, 10, "", "", 0}, {OI_DSL_BLOCK_END, 11, "entry", "", 0}, {OI_DSL_END, 12, "", "", 0}};
    expect_invalid(op_probed, NULL, "bad.c:9: error:", "op transpose produces f32[2, ?] but t is declared f32[?, 2]");
    static const oi_dsl_stmt op_runtime[] = {
        {OI_DSL_SECTION_PERSISTENT, 1, "", "", 0}, {OI_DSL_VAR, 2, "", "n, i32, @init(3)", 0},
        {OI_DSL_VAR, 3, "", "A(i), f32[2], @table", 0}, {OI_DSL_SECTION_END, 4, "", "", 0},
        {OI_DSL_SECTION_VOLATILE, 5, "", "", 0}, {OI_DSL_VAR, 6, "", "x, f32[3, 2], @init(1.0)", 0},
        {OI_DSL_SECTION_END, 7, "", "", 0},
        {OI_DSL_BLOCK, 8, "entry", "", 0}, {OI_DSL_ASSIGN, 9, "", "r, f32[?, 2]", 0},
        {OI_DSL_ASSIGN, 10, "", "t, f32[?, 3]", 0},
        {OI_DSL_CACHE_READ, 11, "", "A[0..n], r", 0},
        {OI_DSL_OP, 12, "add", "r, x", OI_OP_add}, {OI_DSL_TO, 12, "", "t", 0}, /* [3, 2] when n = 3 */
        {OI_DSL_RETURN, 13, "", "", 0}, {OI_DSL_BLOCK_END, 14, "entry", "", 0}, {OI_DSL_END, 15, "", "", 0}};
    g = oi_graph_build("late", "late.c", op_runtime);
    e = g ? make_exec(&sim, NULL, g, false) : NULL;
    CHECK_MSG(e != NULL, "make_exec: %s", oi_last_error());
    if (e) {
        CHECK(oi_executor_run_step(e) != OI_OK);
        CHECK_STR_CONTAINS(oi_last_error(), "late.c:12: error:");
        CHECK_STR_CONTAINS(oi_last_error(), "t is declared f32[?, 3] but gets f32[3, 2]");
        oi_executor_free(e);
        oi_simulator_free(sim);
    }
    oi_graph_free(g);
}

/* Temporaries typed by their first writer: OI_ASSIGN(h) with no type. */
OI_GRAPH(g_typed_by_op,
  OI_DYNAMIC( OI_VAR(x, f32[S, 4]) )
  OI_VOLATILE( OI_VAR(w, f32[4, 3], @init(0.5)) )
  OI_PERSISTENT( OI_VAR(n, i32, @init(0)) OI_VAR(H(t), f32[S, 3], @table) )
  OI_BLOCK(entry,
    OI_ASSIGN(h)
    OI_ASSIGN(flat)
    OI_ASSIGN(hist)
    OI_ASSIGN(total)
    OI_ASSIGN(copy)
    OI_ASSIGN(ints)
    OI_OP(matmul, x, w) OI_TO(h)               /* f32[S, 3] */
    OI_OP(relu, h) OI_TO(h)                    /* typed: checked as declared */
    OI_OP(reshape, h, shape=[-1]) OI_TO(flat)  /* f32[S*3] */
    OI_CACHE_WRITE(h, H[n])
    OI_CACHE_READ(H[0..n+1], hist)             /* f32[?, S, 3] */
    OI_OP(sum_axis, hist, axes=[0]) OI_TO(total) /* f32[S, 3]: the '?' dim is summed away */
    OI_TRANSFER(h, copy)
    OI_OP(cast, flat, to=i32) OI_TO(ints)
    OI_CACHE_INCREMENT(n)
    OI_RETURN()
  )
)

static void check_shape(oi_executor *e, const char *name, oi_dtype dtype, int ndim, const int64_t *shape) {
    oi_tensor_view v;
    oi_status st = oi_executor_fetch(e, name, dtype, &v);
    CHECK_MSG(st == OI_OK, "fetch %s: %s", name, oi_last_error());
    CHECK_MSG(st != OI_OK || (int)v.ndim == ndim, "%s: rank %d, want %d", name, (int)v.ndim, ndim);
    for (int d = 0; st == OI_OK && d < ndim && d < (int)v.ndim; d++)
        CHECK_MSG((int64_t)v.shape[d] == shape[d], "%s: dim %d is %lld, want %lld", name, d, (long long)v.shape[d],
                  (long long)shape[d]);
}

static void test_typed_by_op(void) {
    oi_writer *w = oi_writer_new();
    CHECK_OK(oi_writer_add_sizevar(w, "S", 2));
    oi_model *m = open_written(w, "typed_by_op");
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, m, g_typed_by_op(), true);
    if (e) {
        float x[8] = {1, 2, 3, 4, -1, -2, -3, -4};
        for (int step = 0; step < 2; step++) {
            CHECK_OK(OI_TRY_INSERT(e, x, x, 8));
            CHECK_OK(oi_executor_run_step(e));
        }
        static const int64_t s23[2] = {2, 3}, s6[1] = {6}, s223[3] = {2, 2, 3};
        check_shape(e, "h", OI_DTYPE_F32, 2, s23);
        check_shape(e, "flat", OI_DTYPE_F32, 1, s6);
        check_shape(e, "hist", OI_DTYPE_F32, 3, s223);
        check_shape(e, "total", OI_DTYPE_F32, 2, s23);
        check_shape(e, "copy", OI_DTYPE_F32, 2, s23);
        check_shape(e, "ints", OI_DTYPE_I32, 1, s6);
        float h[6] = {5, 5, 5, 0, 0, 0}, total[6] = {10, 10, 10, 0, 0, 0}; /* row sums * 0.5, relu; two steps */
        check_f32(e, "h", h, 6, 1e-6);
        check_f32(e, "total", total, 6, 1e-6);
        char *trace = oi_executor_trace_json(e);
        CHECK_STR_CONTAINS(trace, "\"type\": \"f32[?, 2, 3]\"");
        CHECK_STR_CONTAINS(trace, "\"type\": \"i32[6]\"");
        oi_free(trace);
        oi_executor_free(e);
        oi_simulator_free(sim);
    }
    /* the graph keeps "typed by its writer"; the typed forms show what validation gave */
    const oi_graph *g = g_typed_by_op();
    char *json = g ? oi_graph_to_json(g) : NULL;
    CHECK_STR_CONTAINS(json, "\"name\": \"h\", \"typed_by_op\": true, \"src\"");
    oi_graph_free(check_json_round_trip(json));
    oi_free(json);
    json = g ? oi_graph_to_json_typed(g, m) : NULL;
    CHECK_MSG(json != NULL, "to_json_typed: %s", oi_last_error());
    CHECK_STR_CONTAINS(json, "\"name\": \"h\", \"typed_by_op\": true, \"dtype\": \"f32\", \"dims\": [\"2\", \"3\"], \"src\"");
    CHECK_STR_CONTAINS(json, "\"name\": \"hist\", \"typed_by_op\": true, \"dtype\": \"f32\", \"dims\": [\"?\", \"2\", \"3\"], \"src\"");
    oi_graph *back = check_json_round_trip(json);
    CHECK(back && oi_graph_validate(back, m) == OI_OK); /* typed again by the validator */
    oi_graph_free(back);
    oi_free(json);
    char *dot = g ? oi_graph_to_dot(g) : NULL;
    CHECK_STR_CONTAINS(dot, "assign flat (typed by its first writer)");
    oi_free(dot);
    dot = g ? oi_graph_to_dot_typed(g, m) : NULL;
    CHECK_STR_CONTAINS(dot, "assign flat: f32[6] (from its first writer)");
    oi_free(dot);

    expect_invalid(one_op_graph("x, f32[4]", INTO_TEMP, "t", OI_OP_add, "x, t"), m, "bad.c:6: error:",
                   "t is read before anything writes it: OI_ASSIGN(t) takes its dtype");
    static const oi_dsl_stmt never[] = {
        {OI_DSL_BLOCK, 1, "entry", "", 0}, {OI_DSL_ASSIGN, 2, "", "t", 0},
        {OI_DSL_RETURN, 3, "", "", 0}, {OI_DSL_BLOCK_END, 4, "entry", "", 0}, {OI_DSL_END, 5, "", "", 0}};
    oi_graph *unused = oi_graph_build("bad", "bad.c", never);
    e = unused ? make_exec(&sim, m, unused, false) : NULL;
    if (e) {
        CHECK_EQ_INT(oi_executor_warning_count(e), 1);
        CHECK_STR_CONTAINS(oi_executor_warning(e, 0), "bad.c:2: warning: OI_ASSIGN(t): nothing writes t, so it has no type");
        oi_tensor_view v;
        CHECK(oi_executor_fetch(e, "t", OI_DTYPE_F32, &v) != OI_OK);
        CHECK_STR_CONTAINS(oi_last_error(), "t has no type: nothing writes it");
        oi_executor_free(e);
        oi_simulator_free(sim);
    }
    oi_graph_free(unused);
    static const oi_dsl_stmt placeholder_in[] = {
        {OI_DSL_SECTION_PERSISTENT, 1, "", "", 0}, {OI_DSL_VAR, 2, "", "A(i), f32[2], @table", 0},
        {OI_DSL_SECTION_END, 3, "", "", 0},
        {OI_DSL_BLOCK, 4, "entry", "", 0}, {OI_DSL_ASSIGN, 5, "", "r, f32[1, 2]", 0}, {OI_DSL_ASSIGN, 6, "", "t", 0},
        {OI_DSL_CACHE_READ, 7, "", "A[], r", 0},
        {OI_DSL_OP, 8, "relu", "r", OI_OP_relu}, {OI_DSL_TO, 8, "", "t", 0},
        {OI_DSL_RETURN, 9, "", "", 0}, {OI_DSL_BLOCK_END, 10, "entry", "", 0}, {OI_DSL_END, 11, "", "", 0}};
    expect_invalid(placeholder_in, m, "bad.c:8: error:", "t takes its type from op relu, whose input shapes are only known at run time");
    oi_model_close(m);
}

/* Prefix tables whose entries differ in shape: E(n) names a size per entry,
 * so blocks of different widths share one loop. */
OI_GRAPH(g_entry_dims,
  OI_DYNAMIC( OI_VAR(x, f32[1, 2]) )
  OI_CONSTANT(
    OI_VAR(up(n), f32[2, E(n)], @pattern("blk{n}.up"))
    OI_VAR(down(n), f32[E(n), 2], @pattern("blk{n}.down"))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(y, f32[1, 2])
    OI_TRANSFER(x, y)
    OI_LOOP(blocks, l, 0..2,
      OI_ASSIGN(h)                               /* f32[1, ?]: E(l) wide */
      OI_ASSIGN(s)
      OI_ASSIGN(tot)
      OI_ASSIGN(d)
      OI_OP(matmul, y, up[l]) OI_TO(h)
      OI_OP(top_k, h, k=E(l)) OI_TO(s)           /* a setting per entry */
      OI_OP(sum_axis, s, axes=[1]) OI_TO(tot)
      OI_OP(matmul, h, down[l]) OI_TO(d)
      OI_OP(add, d, tot) OI_TO(y)
    )
    OI_RETURN()
  )
)

static oi_model *entry_dims_model(int64_t down1_rows) {
    oi_writer *w = oi_writer_new();
    float ones[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    uint64_t up0[2] = {2, 3}, down0[2] = {3, 2}, up1[2] = {2, 5}, down1[2] = {(uint64_t)down1_rows, 2};
    add_f32(w, "blk0.up", 2, up0, ones);
    add_f32(w, "blk0.down", 2, down0, ones);
    add_f32(w, "blk1.up", 2, up1, ones);
    add_f32(w, "blk1.down", 2, down1, ones);
    return open_written(w, down1_rows == 5 ? "entry_dims" : "entry_dims_bad");
}

static void test_entry_dims(void) {
    oi_model *m = entry_dims_model(5);
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, m, g_entry_dims(), false);
    if (e) {
        float x[2] = {1, 2};
        CHECK_OK(OI_TRY_INSERT(e, x, x, 2));
        CHECK_OK(oi_executor_run_step(e));
        /* E = 3: h = [3, 3, 3], tot = 9, d = [9, 9], y = [18, 18]; E = 5: h = [36] * 5, y = [360, 360] */
        float y[2] = {360, 360};
        check_f32(e, "y", y, 2, 0);
        static const int64_t h1[2] = {1, 5};
        check_shape(e, "h", OI_DTYPE_F32, 2, h1);
        oi_executor_free(e);
        oi_simulator_free(sim);
    }
    char *json = g_entry_dims() ? oi_graph_to_json_typed(g_entry_dims(), m) : NULL;
    CHECK_MSG(json != NULL, "typed: %s", oi_last_error());
    CHECK_STR_CONTAINS(json, "\"dims\": [\"2\", \"E(n)\"]");
    CHECK_STR_CONTAINS(json, "{\"name\": \"k\", \"type\": \"size\", \"value\": \"E(l)\"}");
    CHECK_STR_CONTAINS(json, "\"name\": \"h\", \"typed_by_op\": true, \"dtype\": \"f32\", \"dims\": [\"1\", \"?\"]");
    oi_graph_free(check_json_round_trip(json));
    oi_free(json);
    oi_model_close(m);

    /* checked at validation: every entry against the model, E(n) the same in every table */
    m = entry_dims_model(4);
    CHECK_STATUS(oi_graph_validate(g_entry_dims(), m), OI_ERROR_VALIDATION);
    CHECK_STR_CONTAINS(oi_last_error(), "E(n) is 4 in down (model tensor 'blk1.down') but 5 in up, for n = 1");
    oi_model_close(m);
    m = entry_dims_model(5);
    static const oi_dsl_stmt not_table[] = {
        {OI_DSL_SECTION_CONSTANT, 1, "", "", 0}, {OI_DSL_VAR, 2, "", "w, f32[E(n)]", 0}, {OI_DSL_SECTION_END, 3, "", "", 0},
        {OI_DSL_BLOCK, 4, "entry", "", 0}, {OI_DSL_RETURN, 5, "", "", 0}, {OI_DSL_BLOCK_END, 6, "entry", "", 0},
        {OI_DSL_END, 7, "", "", 0}};
    expect_invalid(not_table, m, "bad.c:2: error:", "a size per entry (E(n)) belongs to a prefix table");
    expect_invalid(one_op_graph("x, f32[1, 3]", INTO_TEMP, "s, f32[1, 3]", OI_OP_top_k, "x, k=Q(0)"), m, "bad.c:6: error:",
                   "setting k=Q(0): no prefix table with one index declares");
    oi_model_close(m);
}

OI_GRAPH(g_reset,
  OI_DYNAMIC( OI_VAR(v, f32[1]) )
  OI_PERSISTENT(
    OI_VAR(step, i64, @init(7))
    OI_VAR(B(i, j), f32[1], @table)
  )
  OI_BLOCK(entry,
    OI_ASSIGN(row, f32[3, 1])
    OI_ASSIGN(col, f32[2, 1])
    OI_CACHE_WRITE(v, B[0, 0])
    OI_CACHE_WRITE(v, B[1, 2])
    OI_CACHE_INCREMENT(step, 5)
    OI_CACHE_RESET(B[0])
    OI_CACHE_READ(B[1, ..], row)
    OI_CACHE_READ(B[.., 2], col)
    OI_CACHE_DECREMENT(step, 2)
    OI_RETURN()
  )
)

static void test_reset_multi_index(void) {
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, NULL, g_reset(), false);
    if (!e)
        return;
    float v[1] = {4};
    CHECK_OK(OI_TRY_INSERT(e, v, v, 1));
    CHECK_OK(oi_executor_run_step(e));
    /* B[1,2] = 4; B[0, *] reset; sizes stay [2, 3] (B[1, 2] is the largest key) */
    float row[3] = {0, 0, 4}, col[2] = {0, 4};
    check_f32(e, "row", row, 3, 0);
    check_f32(e, "col", col, 2, 0);
    CHECK_EQ_INT(fetch_i64(e, "step"), 10); /* 7 + 5 - 2 */
    oi_executor_free(e);
    oi_simulator_free(sim);
}

OI_GRAPH(g_fixed,
  OI_DYNAMIC( OI_VAR(v, f32[1]) )
  OI_PERSISTENT(
    OI_VAR(n, i32, @init(0))
    OI_VAR(F(i), f32[1], @table, @fixed(i=2))
  )
  OI_BLOCK(entry,
    OI_CACHE_WRITE(v, F[n])
    OI_CACHE_INCREMENT(n)
    OI_RETURN()
  )
)

static void test_fixed_overflow(void) {
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, NULL, g_fixed(), false);
    if (!e)
        return;
    CHECK_OK(oi_executor_run_step(e));
    CHECK_OK(oi_executor_run_step(e));
    CHECK_STATUS(oi_executor_run_step(e), OI_ERROR_RUNTIME);
    CHECK_STR_CONTAINS(oi_last_error(), "cache table F index i = 2 exceeds fixed size 2");
    CHECK_STR_CONTAINS(oi_last_error(), "test_executor.c:");
    CHECK_STR_CONTAINS(oi_last_error(), "F[n]");
    CHECK_EQ_INT(fetch_i64(e, "n"), 2); /* still usable */
    CHECK_STATUS(oi_executor_run_step(e), OI_ERROR_RUNTIME);
    oi_executor_free(e);
    oi_simulator_free(sim);
}

/* ------------------------------------------------------------------ */
/* auto_dim                                                            */
/* ------------------------------------------------------------------ */

OI_GRAPH(g_auto,
  OI_CONSTANT( OI_VAR(one, f32, @init(1.0)) )
  OI_PERSISTENT(
    OI_VAR(n, i32, @init(0))
    OI_VAR(M(r, c), f32[2, 2], @auto_dim(r, c), @fixed(r=2))
    OI_VAR(C(l, r), f32[2], @table, @auto_dim(r))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(m, f32[2, 2])
    OI_ASSIGN(c0, f32[2])
    OI_ASSIGN(c1, f32[2])
    OI_CACHE_INCREMENT(n)
    OI_CACHE_READ(M[n, n], m)
    OI_OP(add, m, one) OI_TO(m)
    OI_CACHE_WRITE(m, M[n, n])
    OI_CACHE_READ(C[0, n], c0)
    OI_CACHE_READ(C[1, 3], c1)
    OI_RETURN()
  )
)

static void test_auto_dim(void) {
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, NULL, g_auto(), false);
    if (!e)
        return;
    CHECK_OK(oi_executor_run_step(e)); /* n = 1: M is 3x3 of ones */
    CHECK_OK(oi_executor_run_step(e)); /* n = 2: 4x4, old 3x3 block + 1 = 2, new cells 0 + 1 = 1 */
    float want[16] = {2, 2, 2, 1, 2, 2, 2, 1, 2, 2, 2, 1, 1, 1, 1, 1};
    check_f32(e, "M", want, 16, 0);
    oi_tensor_view v;
    CHECK_OK(oi_executor_fetch(e, "c0", OI_DTYPE_F32, &v));
    CHECK_EQ_INT(v.shape[0], 4); /* 2 + n */
    CHECK_OK(oi_executor_fetch(e, "c1", OI_DTYPE_F32, &v));
    CHECK_EQ_INT(v.shape[0], 5); /* 2 + 3 */
    CHECK_STATUS(oi_executor_run_step(e), OI_ERROR_RUNTIME); /* n = 3 > @fixed(r=2) */
    CHECK_STR_CONTAINS(oi_last_error(), "auto_dim M exceeds fixed max 2");
    oi_executor_free(e);
    oi_simulator_free(sim);
}

/* ------------------------------------------------------------------ */
/* branches, loops, return                                             */
/* ------------------------------------------------------------------ */

OI_GRAPH(g_flow,
  OI_DYNAMIC( OI_VAR(s, f32) OI_VAR(n, i32) )
  OI_CONSTANT( OI_VAR(zero, f32, @init(0.0)) OI_VAR(one, f32, @init(1.0)) OI_VAR(two, f32, @init(2.0)) )
  OI_VOLATILE(
    OI_VAR(y, f32, @init(3.0))
    OI_VAR(count, f32, @init(0.0))
    OI_VAR(early, f32, @init(0.0))
    OI_VAR(after, f32, @init(0.0))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(cond, bool)
    OI_OP(gt, s, zero) OI_TO(cond)
    OI_BRANCH(cond, pos, neg)
    OI_BRANCH(always)
    OI_LOOP(outer, i, 0..3,
      OI_LOOP(inner, j, 0..n,
        OI_OP(add, count, one) OI_TO(count)
      )
    )
    OI_LOOP(once, k, 0..5,
      OI_OP(add, early, one) OI_TO(early)
      OI_RETURN()
    )
    OI_OP(add, after, one) OI_TO(after)
    OI_RETURN()
    OI_OP(add, after, one) OI_TO(after)
  )
  OI_BLOCK(pos,
    OI_OP(mul, y, two) OI_TO(y)
    OI_RETURN()
  )
  OI_BLOCK(neg,
    OI_OP(neg, y) OI_TO(y)
    OI_RETURN()
  )
  OI_BLOCK(always,
    OI_OP(add, y, one) OI_TO(y)
  )
)

static void test_control_flow(void) {
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, NULL, g_flow(), false);
    if (!e)
        return;
    float s = 1.0f;
    int32_t n = 4;
    CHECK_OK(OI_TRY_INSERT(e, s, &s, 1));
    CHECK_OK(OI_TRY_INSERT_T(e, n, i32, &n, 1));
    CHECK_OK(oi_executor_run_step(e));
    float y_pos[1] = {7}, count[1] = {12}, early[1] = {1}, after[1] = {1}; /* 3*2+1; 3*4 loops */
    check_f32(e, "y", y_pos, 1, 0);
    check_f32(e, "count", count, 1, 0);
    check_f32(e, "early", early, 1, 0); /* return inside a loop leaves the loop */
    check_f32(e, "after", after, 1, 0); /* the entry's return ends the step */
    s = -1.0f;
    n = 0;
    CHECK_OK(OI_TRY_INSERT(e, s, &s, 1));
    CHECK_OK(OI_TRY_INSERT_T(e, n, i32, &n, 1));
    CHECK_OK(oi_executor_run_step(e));
    float y_neg[1] = {-2}, zero[1] = {0}; /* -3 + 1; an empty inner loop */
    check_f32(e, "y", y_neg, 1, 0);
    check_f32(e, "count", zero, 1, 0);
    oi_executor_free(e);
    oi_simulator_free(sim);
}

/* ------------------------------------------------------------------ */
/* yield / await                                                       */
/* ------------------------------------------------------------------ */

OI_GRAPH(g_yield,
  OI_DYNAMIC( OI_VAR(x, f32[4]) )
  OI_CONSTANT( OI_VAR(two, f32, @init(2.0)) )
  OI_VOLATILE( OI_VAR(h, f32[4]) OI_VAR(seen, f32[4]) )
  OI_BLOCK(entry,
    OI_YIELD(x)
    OI_OP(add, h, two) OI_TO(h)
    OI_AWAIT(x)
    OI_OP(add, x, h) OI_TO(h)
    OI_RETURN()
  )
  OI_BLOCK(doubler,
    OI_AWAIT(x)
    OI_OP(mul, x, two) OI_TO(x)
    OI_YIELD(x)
  )
  OI_BLOCK(reader,
    OI_AWAIT(x)
    OI_OP(add, x, x) OI_TO(seen)
    OI_YIELD(x)
  )
)

static void test_yield_await(void) {
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, NULL, g_yield(), true);
    if (!e)
        return;
    float x[4] = {1, 2, 3, 4};
    CHECK_OK(OI_TRY_INSERT(e, x, x, 4));
    CHECK_OK(oi_executor_run_step(e));
    /* doubler's x comes back: x = [2,4,6,8]; h = 2 + x */
    float x_want[4] = {2, 4, 6, 8}, h_want[4] = {4, 6, 8, 10}, seen_want[4] = {0, 0, 0, 0};
    check_f32(e, "x", x_want, 4, 0);
    check_f32(e, "h", h_want, 4, 0);
    check_f32(e, "seen", seen_want, 4, 0); /* a consumer's other writes stay private */
    char *json = oi_executor_trace_json(e);
    CHECK_STR_CONTAINS(json, "\"block_name\": \"doubler\"");
    CHECK_STR_CONTAINS(json, "\"block_name\": \"reader\"");
    CHECK_STR_CONTAINS(json, "\"kind\": \"Yield\"");
    CHECK_STR_CONTAINS(json, "\"kind\": \"Await\"");
    oi_free(json);
    oi_executor_free(e);
    oi_simulator_free(sim);
}

/* ------------------------------------------------------------------ */
/* iteration and the trace                                             */
/* ------------------------------------------------------------------ */

static void test_iterate_and_trace(void) {
    oi_model *m = minimal_model();
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, m, g_minimal(), true);
    if (!e)
        return;
    float x1[4] = {1, 2, 3, 4};
    CHECK_OK(OI_TRY_INSERT(e, x, x1, 4));
    CHECK_OK(oi_executor_iterate(e));
    oi_event ev;
    const oi_event_kind kinds[4] = {OI_EVENT_ASSIGN, OI_EVENT_OP_EXECUTE, OI_EVENT_OP_EXECUTE, OI_EVENT_RETURN};
    float y_seen[4];
    int count = 0;
    oi_status st;
    while ((st = oi_executor_next(e, &ev)) == OI_OK) {
        if (count < 4)
            CHECK_EQ_INT(ev.kind, kinds[count]);
        CHECK_MSG(strcmp(ev.block_name, "entry") == 0, "block %s", ev.block_name);
        /* fetch between nodes; inserting is refused */
        OI_FETCH(e, y, f32);
        if (count < 4)
            y_seen[count] = y.data[0];
        CHECK_STATUS(OI_TRY_INSERT(e, x, x1, 4), OI_ERROR_RUNTIME);
        if (count == 1) {
            CHECK_MSG(strcmp(ev.op_name, "add") == 0, "op %s", ev.op_name);
            CHECK_STR_CONTAINS(ev.description, "add");
        }
        count++;
    }
    CHECK_STATUS(st, OI_ERROR_NOT_FOUND);
    CHECK_EQ_INT(count, 4);
    /* y[0] is 5 until the mul, then 5 * 1.5 */
    CHECK_NEAR(y_seen[0], 5.0, 0);
    CHECK_NEAR(y_seen[1], 5.0, 0);
    CHECK_NEAR(y_seen[2], 7.5, 0);
    CHECK_OK(OI_TRY_INSERT(e, x, x1, 4)); /* the step is over */

    char *json = oi_executor_trace_json(e);
    CHECK_MSG(json != NULL, "trace: %s", oi_last_error());
    CHECK_STR_CONTAINS(json, "\"block_name\": \"entry\"");
    CHECK_STR_CONTAINS(json, "\"node_index\": 0");
    CHECK_STR_CONTAINS(json, "\"node_uuid\": \"");
    CHECK_STR_CONTAINS(json, "\"kind\": \"Assign\",\n    \"params\": [],\n    \"output\": [\"t0\"]");
    CHECK_STR_CONTAINS(json, "\"kind\": \"OpExecute\",\n    \"op\": \"add\",\n    \"params\": [\"x\", \"a\"],\n"
                             "    \"output\": [\"t0\"]");
    CHECK_STR_CONTAINS(json, "\"op\": \"mul\",\n    \"params\": [\"y\", \"t0\"]");
    CHECK_STR_CONTAINS(json, "\"params\": [\"y\", \"t0\"],\n    \"output\": [\"y\"]");
    CHECK_MSG(!strstr(json, "\"kind\": \"Assign\",\n    \"op\""), "an Assign event carries no op");
    CHECK_STR_CONTAINS(json, "\"kind\": \"Return\"");
    CHECK_STR_CONTAINS(json, "\"micros\": [");
    oi_free(json);
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
}

/* ------------------------------------------------------------------ */
/* @ref, metadata links and attributes, transfer aliasing              */
/* ------------------------------------------------------------------ */

OI_GRAPH(g_links,
  OI_CONSTANT(
    OI_VAR(alpha, f32[4], @ref("weights.alpha"))
    OI_VAR(scale, f32, @ref("scale_meta"))
  )
  OI_PERSISTENT( OI_VAR(state, f32[4]) )
  OI_VOLATILE( OI_VAR(y, f32[4]) OI_VAR(z, f32[4]) OI_VAR(r, f32[4]) )
  OI_BLOCK(entry,
    OI_TRANSFER(alpha, y)
    OI_OP(mul, y, scale) OI_TO(y)
    OI_OP(relu, y, clamp_max=limit) OI_TO(z)
    OI_BARRIER()
    OI_CACHE_READ(state, r)
    OI_OP(add, r, scale) OI_TO(r)
    OI_CACHE_WRITE(r, state)
    OI_RETURN()
  )
)

static void test_links_and_aliases(void) {
    oi_writer *w = oi_writer_new();
    uint64_t d4[1] = {4};
    float alpha[4] = {1, -2, 3, -4}, state[4] = {7, 8, 9, 10};
    add_f32(w, "weights.alpha", 1, d4, alpha);
    add_f32(w, "state", 1, d4, state);
    add_f32(w, "unused", 1, d4, state);
    double scale = 2.0;
    float limit = 5.0f;
    CHECK_OK(oi_writer_add_metadata_scalar(w, "scale_meta", OI_DTYPE_F64, &scale));
    CHECK_OK(oi_writer_add_metadata_scalar(w, "limit", OI_DTYPE_F32, &limit));
    oi_model *m = open_written(w, "links");
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, m, g_links(), true);
    if (!e)
        return;
    CHECK_OK(oi_executor_run_step(e));
    CHECK_OK(oi_executor_run_step(e));
    /* y = alpha * 2 (written through a transfer alias: alpha keeps its value) */
    float y[4] = {2, -4, 6, -8}, z[4] = {2, 0, 5, 0}, st2[4] = {11, 12, 13, 14};
    check_f32(e, "y", y, 4, 0);
    check_f32(e, "alpha", alpha, 4, 0);
    check_f32(e, "z", z, 4, 0);           /* clamp_max=limit from metadata */
    check_f32(e, "state", st2, 4, 0);     /* model data, then + 2 per step */
    check_f32(e, "r", st2, 4, 0);
    CHECK(oi_model_loaded_tensor_count(m) == 2); /* "unused" never read */
    char *json = oi_executor_trace_json(e);
    CHECK_STR_CONTAINS(json, "\"kind\": \"Barrier\"");
    CHECK_STR_CONTAINS(json, "\"kind\": \"Transfer\",\n    \"params\": [\"alpha\"],\n    \"output\": [\"y\"]");
    CHECK_STR_CONTAINS(json, "\"kind\": \"CacheRead\",\n    \"params\": [\"state\"],\n    \"output\": [\"r\"]");
    oi_free(json);
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
}

/* ------------------------------------------------------------------ */
/* validation errors: each names the place, the statement and the why */
/* ------------------------------------------------------------------ */

/* A graph from explicit statements so that the lines are known exactly. */
#define ST(kind, line, head, text, op) {kind, line, head, text, op}

static void expect_invalid(const oi_dsl_stmt *stmts, const oi_model *m, const char *where, const char *why) {
    oi_graph *g = oi_graph_build("bad", "bad.c", stmts);
    if (!g) { /* rules that need no model are already checked when the graph is built */
        CHECK_STR_CONTAINS(oi_last_error(), where);
        CHECK_STR_CONTAINS(oi_last_error(), why);
        return;
    }
    CHECK_STATUS(oi_graph_validate(g, m), OI_ERROR_VALIDATION);
    CHECK_STR_CONTAINS(oi_last_error(), where);
    CHECK_STR_CONTAINS(oi_last_error(), why);
    oi_simulator *sim = oi_simulator_new(m, OI_DEVICE_CPU);
    CHECK(oi_simulator_make_executor(sim, g) == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), why);
    oi_simulator_free(sim);
    oi_graph_free(g);
}

static void test_validation_errors(void) {
    oi_model *m = minimal_model(); /* B = 4, a: f32[4] */
    {   /* a model tensor of another shape */
        const oi_dsl_stmt s[] = {
            ST(OI_DSL_SECTION_VOLATILE, 10, "", "", 0), ST(OI_DSL_VAR, 11, "", "a, f32[8]", 0),
            ST(OI_DSL_SECTION_END, 12, "", "", 0), ST(OI_DSL_BLOCK, 13, "entry", "", 0), ST(OI_DSL_RETURN, 14, "", "", 0),
            ST(OI_DSL_BLOCK_END, 15, "entry", "", 0), ST(OI_DSL_END, 16, "", "", 0)};
        expect_invalid(s, m, "bad.c:11: error: OI_VAR(a, f32[8])", "model tensor 'a' is f32[4], a declares f32[8]");
    }
    {   /* the wrong dtype through @ref */
        const oi_dsl_stmt s[] = {
            ST(OI_DSL_SECTION_CONSTANT, 20, "", "", 0), ST(OI_DSL_VAR, 21, "", "alpha, i32[B], @ref(\"a\")", 0),
            ST(OI_DSL_SECTION_END, 22, "", "", 0), ST(OI_DSL_BLOCK, 23, "entry", "", 0), ST(OI_DSL_RETURN, 24, "", "", 0),
            ST(OI_DSL_BLOCK_END, 25, "entry", "", 0), ST(OI_DSL_END, 26, "", "", 0)};
        expect_invalid(s, m, "bad.c:21: error:", "model tensor 'a' is f32[4], alpha declares i32[4]");
    }
    {   /* @ref to nothing */
        const oi_dsl_stmt s[] = {
            ST(OI_DSL_SECTION_CONSTANT, 20, "", "", 0), ST(OI_DSL_VAR, 21, "", "alpha, f32, @ref(\"gamma\")", 0),
            ST(OI_DSL_SECTION_END, 22, "", "", 0), ST(OI_DSL_BLOCK, 23, "entry", "", 0), ST(OI_DSL_RETURN, 24, "", "", 0),
            ST(OI_DSL_BLOCK_END, 25, "entry", "", 0), ST(OI_DSL_END, 26, "", "", 0)};
        expect_invalid(s, m, "bad.c:21: error:", "model variable not found: @ref(\"gamma\")");
    }
    {   /* an unknown size */
        const oi_dsl_stmt s[] = {
            ST(OI_DSL_SECTION_DYNAMIC, 30, "", "", 0), ST(OI_DSL_VAR, 31, "", "x, f32[Q]", 0),
            ST(OI_DSL_SECTION_END, 32, "", "", 0), ST(OI_DSL_BLOCK, 33, "entry", "", 0), ST(OI_DSL_RETURN, 34, "", "", 0),
            ST(OI_DSL_BLOCK_END, 35, "entry", "", 0), ST(OI_DSL_END, 36, "", "", 0)};
        expect_invalid(s, m, "bad.c:31: error:", "invalid dims for x: unknown size 'Q'");
    }
    {   /* op shapes: broadcasting [4] with [3] fails; output dtype */
        const oi_dsl_stmt s[] = {
            ST(OI_DSL_SECTION_VOLATILE, 40, "", "", 0), ST(OI_DSL_VAR, 41, "", "a, f32[B]", 0),
            ST(OI_DSL_VAR, 42, "", "b, f32[3]", 0), ST(OI_DSL_SECTION_END, 43, "", "", 0),
            ST(OI_DSL_BLOCK, 44, "entry", "", 0), ST(OI_DSL_ASSIGN, 45, "", "t, f32[B]", 0),
            ST(OI_DSL_OP, 46, "add", "a, b", (int)OI_OP_add), ST(OI_DSL_TO, 46, "", "t", 0),
            ST(OI_DSL_RETURN, 47, "", "", 0), ST(OI_DSL_BLOCK_END, 48, "entry", "", 0), ST(OI_DSL_END, 49, "", "", 0)};
        expect_invalid(s, m, "bad.c:46: error:", "add");
    }
    {
        const oi_dsl_stmt s[] = {
            ST(OI_DSL_SECTION_VOLATILE, 50, "", "", 0), ST(OI_DSL_VAR, 51, "", "a, f32[B]", 0),
            ST(OI_DSL_SECTION_END, 52, "", "", 0), ST(OI_DSL_BLOCK, 53, "entry", "", 0),
            ST(OI_DSL_ASSIGN, 54, "", "t, i32[B]", 0), ST(OI_DSL_OP, 55, "add", "a, a", (int)OI_OP_add),
            ST(OI_DSL_TO, 55, "", "t", 0), ST(OI_DSL_RETURN, 56, "", "", 0), ST(OI_DSL_BLOCK_END, 57, "entry", "", 0),
            ST(OI_DSL_END, 58, "", "", 0)};
        expect_invalid(s, m, "bad.c:55: error: OI_OP(add, a, a) OI_TO(t)", "the output is declared i32 but f32 inputs give f32");
    }
    {   /* a prefix table entry missing from the model (loop bound known) */
        const oi_dsl_stmt s[] = {
            ST(OI_DSL_SECTION_VOLATILE, 60, "", "", 0), ST(OI_DSL_VAR, 61, "", "a, f32[B]", 0),
            ST(OI_DSL_VAR, 62, "", "W(l), f32[B], @pattern(\"W.{l}\")", 0), ST(OI_DSL_SECTION_END, 63, "", "", 0),
            ST(OI_DSL_BLOCK, 64, "entry", "", 0), ST(OI_DSL_LOOP, 65, "layers", "l in 0..2", 0),
            ST(OI_DSL_OP, 66, "add", "a, W[l]", (int)OI_OP_add), ST(OI_DSL_TO, 66, "", "a", 0),
            ST(OI_DSL_LOOP_END, 67, "layers", "", 0), ST(OI_DSL_RETURN, 68, "", "", 0),
            ST(OI_DSL_BLOCK_END, 69, "entry", "", 0), ST(OI_DSL_END, 70, "", "", 0)};
        expect_invalid(s, m, "bad.c:66: error:", "W: the model has no tensor 'W.0' (pattern \"W.{l}\")");
    }
    {   /* a persistent variable used by an op */
        const oi_dsl_stmt s[] = {
            ST(OI_DSL_SECTION_PERSISTENT, 70, "", "", 0), ST(OI_DSL_VAR, 71, "", "p, f32[B]", 0),
            ST(OI_DSL_SECTION_END, 72, "", "", 0), ST(OI_DSL_SECTION_VOLATILE, 73, "", "", 0),
            ST(OI_DSL_VAR, 74, "", "a, f32[B]", 0), ST(OI_DSL_SECTION_END, 75, "", "", 0),
            ST(OI_DSL_BLOCK, 76, "entry", "", 0), ST(OI_DSL_OP, 77, "add", "a, p", (int)OI_OP_add),
            ST(OI_DSL_TO, 77, "", "a", 0), ST(OI_DSL_RETURN, 78, "", "", 0), ST(OI_DSL_BLOCK_END, 79, "entry", "", 0),
            ST(OI_DSL_END, 80, "", "", 0)};
        expect_invalid(s, m, "bad.c:77: error:", "persistent cache p must be read via cache.read");
    }
    {   /* cache.read into a variable of another dtype */
        const oi_dsl_stmt s[] = {
            ST(OI_DSL_SECTION_PERSISTENT, 80, "", "", 0), ST(OI_DSL_VAR, 81, "", "p, f32[B]", 0),
            ST(OI_DSL_SECTION_END, 82, "", "", 0), ST(OI_DSL_BLOCK, 83, "entry", "", 0),
            ST(OI_DSL_ASSIGN, 84, "", "t, f64[B]", 0), ST(OI_DSL_CACHE_READ, 85, "", "p, t", 0),
            ST(OI_DSL_RETURN, 86, "", "", 0), ST(OI_DSL_BLOCK_END, 87, "entry", "", 0), ST(OI_DSL_END, 88, "", "", 0)};
        expect_invalid(s, m, "bad.c:85: error:", "is f64 but");
    }
    {   /* a branch condition that is not a scalar */
        const oi_dsl_stmt s[] = {
            ST(OI_DSL_SECTION_VOLATILE, 90, "", "", 0), ST(OI_DSL_VAR, 91, "", "a, f32[B]", 0),
            ST(OI_DSL_SECTION_END, 92, "", "", 0), ST(OI_DSL_BLOCK, 93, "entry", "", 0),
            ST(OI_DSL_BRANCH, 94, "", "a, yes, no", 0), ST(OI_DSL_RETURN, 95, "", "", 0),
            ST(OI_DSL_BLOCK_END, 96, "entry", "", 0), ST(OI_DSL_BLOCK, 97, "yes", "", 0), ST(OI_DSL_RETURN, 97, "", "", 0),
            ST(OI_DSL_BLOCK_END, 97, "yes", "", 0), ST(OI_DSL_BLOCK, 98, "no", "", 0), ST(OI_DSL_RETURN, 98, "", "", 0),
            ST(OI_DSL_BLOCK_END, 98, "no", "", 0), ST(OI_DSL_END, 99, "", "", 0)};
        expect_invalid(s, m, "bad.c:94: error:", "branch condition a must be a scalar");
    }
    {   /* a loop bound that is a tensor */
        const oi_dsl_stmt s[] = {
            ST(OI_DSL_SECTION_VOLATILE, 100, "", "", 0), ST(OI_DSL_VAR, 101, "", "a, f32[B]", 0),
            ST(OI_DSL_SECTION_END, 102, "", "", 0), ST(OI_DSL_BLOCK, 103, "entry", "", 0),
            ST(OI_DSL_LOOP, 104, "lp", "i in 0..a", 0), ST(OI_DSL_LOOP_END, 105, "lp", "", 0),
            ST(OI_DSL_RETURN, 106, "", "", 0), ST(OI_DSL_BLOCK_END, 107, "entry", "", 0), ST(OI_DSL_END, 108, "", "", 0)};
        expect_invalid(s, m, "bad.c:104: error:", "loop bound 'a' must be a scalar");
    }
    {   /* two consumers mutate one yielded variable */
        const oi_dsl_stmt s[] = {
            ST(OI_DSL_SECTION_VOLATILE, 110, "", "", 0), ST(OI_DSL_VAR, 111, "", "a, f32[B]", 0),
            ST(OI_DSL_SECTION_END, 112, "", "", 0), ST(OI_DSL_BLOCK, 113, "entry", "", 0),
            ST(OI_DSL_YIELD, 114, "", "a", 0), ST(OI_DSL_AWAIT, 115, "", "a", 0), ST(OI_DSL_RETURN, 116, "", "", 0),
            ST(OI_DSL_BLOCK_END, 117, "entry", "", 0),
            ST(OI_DSL_BLOCK, 118, "c1", "", 0), ST(OI_DSL_AWAIT, 119, "", "a", 0), ST(OI_DSL_OP, 120, "neg", "a", (int)OI_OP_neg),
            ST(OI_DSL_TO, 120, "", "a", 0), ST(OI_DSL_YIELD, 121, "", "a", 0), ST(OI_DSL_BLOCK_END, 122, "c1", "", 0),
            ST(OI_DSL_BLOCK, 123, "c2", "", 0), ST(OI_DSL_AWAIT, 124, "", "a", 0), ST(OI_DSL_OP, 125, "abs", "a", (int)OI_OP_abs),
            ST(OI_DSL_TO, 125, "", "a", 0), ST(OI_DSL_YIELD, 126, "", "a", 0), ST(OI_DSL_BLOCK_END, 127, "c2", "", 0),
            ST(OI_DSL_END, 128, "", "", 0)};
        expect_invalid(s, m, "bad.c:114: error:", "multiple blocks mutate a: c1 and c2");
    }
    {   /* transfer between different shapes */
        const oi_dsl_stmt s[] = {
            ST(OI_DSL_SECTION_VOLATILE, 130, "", "", 0), ST(OI_DSL_VAR, 131, "", "a, f32[B]", 0),
            ST(OI_DSL_VAR, 132, "", "b, f32[2]", 0), ST(OI_DSL_SECTION_END, 133, "", "", 0),
            ST(OI_DSL_BLOCK, 134, "entry", "", 0), ST(OI_DSL_TRANSFER, 135, "", "a, b", 0),
            ST(OI_DSL_RETURN, 136, "", "", 0), ST(OI_DSL_BLOCK_END, 137, "entry", "", 0), ST(OI_DSL_END, 138, "", "", 0)};
        expect_invalid(s, m, "bad.c:135: error:", "transfer: a is f32[4] but b is f32[2]");
    }
    {   /* the entry writes a variable it yielded before awaiting it */
        const oi_dsl_stmt s[] = {
            ST(OI_DSL_SECTION_VOLATILE, 140, "", "", 0), ST(OI_DSL_VAR, 141, "", "a, f32[B]", 0),
            ST(OI_DSL_SECTION_END, 142, "", "", 0), ST(OI_DSL_BLOCK, 143, "entry", "", 0),
            ST(OI_DSL_YIELD, 144, "", "a", 0), ST(OI_DSL_OP, 145, "neg", "a", (int)OI_OP_neg), ST(OI_DSL_TO, 145, "", "a", 0),
            ST(OI_DSL_AWAIT, 146, "", "a", 0), ST(OI_DSL_RETURN, 147, "", "", 0), ST(OI_DSL_BLOCK_END, 148, "entry", "", 0),
            ST(OI_DSL_BLOCK, 149, "c1", "", 0), ST(OI_DSL_AWAIT, 150, "", "a", 0), ST(OI_DSL_YIELD, 151, "", "a", 0),
            ST(OI_DSL_BLOCK_END, 152, "c1", "", 0), ST(OI_DSL_END, 153, "", "", 0)};
        expect_invalid(s, m, "bad.c:145: error:", "a was yielded to consumer blocks: entry cannot write it before await");
    }
    {   /* an attribute naming nothing in the model */
        const oi_dsl_stmt s[] = {
            ST(OI_DSL_SECTION_VOLATILE, 160, "", "", 0), ST(OI_DSL_VAR, 161, "", "a, f32[B]", 0),
            ST(OI_DSL_SECTION_END, 162, "", "", 0), ST(OI_DSL_BLOCK, 163, "entry", "", 0),
            ST(OI_DSL_OP, 164, "relu", "a, clamp_max=ceiling", (int)OI_OP_relu), ST(OI_DSL_TO, 164, "", "a", 0),
            ST(OI_DSL_RETURN, 165, "", "", 0), ST(OI_DSL_BLOCK_END, 166, "entry", "", 0), ST(OI_DSL_END, 167, "", "", 0)};
        expect_invalid(s, m, "bad.c:164: error:", "clamp_max=ceiling: 'ceiling' names no scalar model tensor");
    }
    oi_model_close(m);
}

/* ------------------------------------------------------------------ */
/* the original's baselines                                            */
/* ------------------------------------------------------------------ */

static const float *model_f32(const oi_model *m, const char *name, size_t *n) {
    const oi_tensor_info *t = oi_model_find_tensor(m, name);
    const void *data = NULL;
    CHECK_MSG(t != NULL, "model tensor %s missing", name);
    if (!t || oi_model_tensor_data(m, t, &data) != OI_OK)
        return NULL;
    *n = (size_t)t->numel;
    return (const float *)data;
}

OI_GRAPH(g_accumulation,
  OI_VOLATILE( OI_VAR(x, f32[B, D]) OI_VAR(w, f32[D, H]) )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[B, H])
    OI_ASSIGN(s, f32[B, 1])
    OI_OP(matmul, x, w) OI_TO(h)
    OI_OP(sum_axis, h, axes=[1], keepdims=true) OI_TO(s)
    OI_RETURN()
  )
)

OI_GRAPH(g_simple,
  OI_VOLATILE( OI_VAR(simple_x, f32[2, 3]) OI_VAR(simple_w, f32[3, 4]) OI_VAR(simple_b, f32[2, 4]) )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[2, 4])
    OI_OP(matmul, simple_x, simple_w) OI_TO(h)
    OI_OP(add, h, simple_b) OI_TO(h)
    OI_OP(relu, h) OI_TO(h)
    OI_RETURN()
  )
)

OI_GRAPH(g_branchy,
  OI_VOLATILE( OI_VAR(branch_x, f32[2, 3]) )
  OI_BLOCK(entry,
    OI_ASSIGN(r, f32[2, 3])
    OI_ASSIGN(a, f32[2, 3])
    OI_OP(relu, branch_x) OI_TO(r)
    OI_OP(abs, branch_x) OI_TO(a)
    OI_OP(add, r, a) OI_TO(r)
    OI_RETURN()
  )
)

static void run_baseline(const char *path, const oi_graph *g, const char *var, const char *ref, double tol) {
    oi_model *m = oi_model_open(path);
    if (!m) {
        printf("skipping %s: %s\n", path, oi_last_error());
        return;
    }
    oi_simulator *sim;
    oi_executor *e = make_exec(&sim, m, g, false);
    if (e) {
        CHECK_OK(oi_executor_run_step(e));
        size_t n = 0;
        const float *want = model_f32(m, ref, &n);
        if (want)
            check_f32(e, var, want, n, tol);
        oi_executor_free(e);
    }
    oi_simulator_free(sim);
    oi_model_close(m);
}

static void test_conformance(void) {
    const char *v2 = "../shared/conformance/openinfer/v2-models/accumulation_demo.oinf";
    run_baseline(v2, g_accumulation(), "h", "matmul_out", 1e-5);
    run_baseline(v2, g_accumulation(), "s", "sum_axis_out", 1e-5);
    run_baseline("../shared/conformance/openinfer/v1/graph/graph_simple.oinf", g_simple(), "h", "simple_out", 1e-4);
    run_baseline("../shared/conformance/openinfer/v1/graph/graph_branch.oinf", g_branchy(), "r", "branch_out", 1e-4);
}

/* residual_mlp_stack (the original's prefix-table example, which it could
 * not run: it read zeros for W[l]) against a naive reference written here. */
OI_GRAPH(g_residual_stack,
  OI_DYNAMIC( OI_VAR(x, f32[B, D]) )
  OI_VOLATILE(
    OI_VAR(W(l), f32[D, D], @pattern("res.mlp.w.{l}"))
    OI_VAR(b(l), f32[D], @pattern("res.mlp.b.{l}"))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[B, D])
    OI_ASSIGN(u, f32[B, D])
    OI_TRANSFER(x, h)
    OI_LOOP(layers, l, 0..num_layers,
      OI_OP(matmul, h, W[l]) OI_TO(u)
      OI_OP(add, u, b[l]) OI_TO(u)
      OI_OP(relu, u) OI_TO(u)
      OI_OP(add, h, u) OI_TO(h)
    )
    OI_RETURN()
  )
)

OI_GRAPH(g_mlp_regression,
  OI_DYNAMIC( OI_VAR(x, f32[B, D]) )
  OI_CONSTANT( OI_VAR(w1, f32[D, H]) OI_VAR(b1, f32[H]) OI_VAR(w2, f32[H, O]) OI_VAR(b2, f32[O]) )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[B, H])
    OI_ASSIGN(y, f32[B, O])
    OI_OP(matmul, x, w1) OI_TO(h)
    OI_OP(add, h, b1) OI_TO(h)
    OI_OP(relu, h) OI_TO(h)
    OI_OP(matmul, h, w2) OI_TO(y)
    OI_OP(add, y, b2) OI_TO(y)
    OI_RETURN()
  )
)

/* out[b, n] = relu?(sum_k in[b, k] w[k, n] + bias[n]) in double */
static void ref_dense(const double *in, const float *w, const float *bias, int rows, int k, int n, bool relu, double *out) {
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < n; j++) {
            double acc = bias[j];
            for (int i = 0; i < k; i++)
                acc += in[r * k + i] * (double)w[i * n + j];
            out[r * n + j] = relu && acc < 0 ? 0 : acc;
        }
}

static void test_v2_models(void) {
    const char *dir = "../shared/conformance/openinfer/v2-models/";
    char path[512];
    snprintf(path, sizeof path, "%sresidual_mlp_stack.oinf", dir);
    oi_model *m = oi_model_open(path);
    if (m) {
        enum { B = 4, D = 32, L = 3 };
        float x[B * D];
        double h[B * D], u[B * D];
        for (int i = 0; i < B * D; i++)
            h[i] = x[i] = (float)((i * 37) % 23 - 11) / 16.0f;
        for (int l = 0; l < L; l++) {
            char wn[32], bn[32];
            size_t n;
            snprintf(wn, sizeof wn, "res.mlp.w.%d", l);
            snprintf(bn, sizeof bn, "res.mlp.b.%d", l);
            const float *w = model_f32(m, wn, &n), *bias = model_f32(m, bn, &n);
            if (!w || !bias)
                break;
            ref_dense(h, w, bias, B, D, D, true, u);
            for (int i = 0; i < B * D; i++)
                h[i] += u[i];
        }
        float want[B * D];
        for (int i = 0; i < B * D; i++)
            want[i] = (float)h[i];
        oi_simulator *sim;
        oi_executor *e = make_exec(&sim, m, g_residual_stack(), false);
        if (e) {
            CHECK_OK(OI_TRY_INSERT(e, x, x, B * D));
            CHECK_OK(oi_executor_run_step(e));
            check_f32(e, "h", want, B * D, 1e-4);
            CHECK_EQ_INT(oi_model_loaded_tensor_count(m), 6); /* each payload once; bias0 never */
            oi_executor_free(e);
        }
        oi_simulator_free(sim);
        oi_model_close(m);
    } else {
        printf("skipping %s: %s\n", path, oi_last_error());
    }

    snprintf(path, sizeof path, "%smlp_regression.oinf", dir);
    m = oi_model_open(path);
    if (m) {
        enum { B = 4, D = 16, H = 32, O = 8 };
        float x[B * D];
        double xd[B * D], h[B * H], y[B * O];
        for (int i = 0; i < B * D; i++)
            xd[i] = x[i] = (float)((i * 13) % 17 - 8) / 8.0f;
        size_t n;
        const float *w1 = model_f32(m, "w1", &n), *b1 = model_f32(m, "b1", &n);
        const float *w2 = model_f32(m, "w2", &n), *b2 = model_f32(m, "b2", &n);
        if (w1 && b1 && w2 && b2) {
            ref_dense(xd, w1, b1, B, D, H, true, h);
            ref_dense(h, w2, b2, B, H, O, false, y);
            float want[B * O];
            for (int i = 0; i < B * O; i++)
                want[i] = (float)y[i];
            oi_simulator *sim;
            oi_executor *e = make_exec(&sim, m, g_mlp_regression(), false);
            if (e) {
                CHECK_OK(OI_TRY_INSERT(e, x, x, B * D));
                CHECK_OK(oi_executor_run_step(e));
                check_f32(e, "y", want, B * O, 1e-4);
                oi_executor_free(e);
            }
            oi_simulator_free(sim);
        }
        oi_model_close(m);
    } else {
        printf("skipping %s: %s\n", path, oi_last_error());
    }
}

/* ------------------------------------------------------------------ */
/* backends                                                            */
/* ------------------------------------------------------------------ */

static void test_backends(void) {
    oi_backend_info infos[8];
    size_t n = oi_backends_discover(infos, 8);
    CHECK(n >= 1);
    CHECK_MSG(strcmp(infos[0].name, "cpu") == 0 && infos[0].available, "first backend %s", infos[0].name);
    oi_simulator *sim = oi_simulator_new(NULL, OI_DEVICE_AUTO);
    CHECK_MSG(sim != NULL, "auto: %s", oi_last_error());
    oi_simulator_free(sim);
    bool vulkan = false, blas = false;
    for (size_t i = 0; i < n && i < 8; i++) {
        vulkan |= strcmp(infos[i].name, "vulkan") == 0 && infos[i].available;
        blas |= strcmp(infos[i].name, "blas") == 0 && infos[i].available;
        if (strcmp(infos[i].name, "blas") == 0 && !infos[i].available)
            CHECK_STR_CONTAINS(infos[i].unavailable_reason, "built without BLAS");
    }
    if (!blas) { /* -Dblas=disabled or no OpenBLAS: a clear error (tests/test_blas.c covers the rest) */
        CHECK(oi_simulator_new(NULL, OI_DEVICE_BLAS) == NULL);
        CHECK_STR_CONTAINS(oi_last_error(), "BLAS backend unavailable");
    }
    if (!vulkan) { /* a clear error, never a crash */
        CHECK(oi_simulator_new(NULL, OI_DEVICE_VULKAN) == NULL);
        CHECK_STR_CONTAINS(oi_last_error(), "Vulkan");
        return;
    }
    /* the same minimal graph on the Vulkan backend gives the CPU's numbers */
    oi_model *m = minimal_model();
    oi_simulator *sim_vk = oi_simulator_new(m, OI_DEVICE_VULKAN);
    CHECK_MSG(sim_vk != NULL, "vulkan: %s", oi_last_error());
    oi_executor *e = sim_vk ? oi_simulator_make_executor(sim_vk, g_minimal()) : NULL;
    if (e) {
        float x1[4] = {1, 2, 3, 4}, y1[4] = {7.5f, 15.0f, 5.0f, 70.0f};
        for (int step = 0; step < 2; step++) {
            CHECK_OK(OI_TRY_INSERT(e, x, x1, 4));
            CHECK_OK(oi_executor_run_step(e));
            check_f32(e, "y", y1, 4, 1e-6);
        }
        for (size_t i = 0; i < oi_executor_warning_count(e); i++)
            printf("vulkan note: %s\n", oi_executor_warning(e, i));
    }
    oi_executor_free(e);
    oi_simulator_free(sim_vk);
    oi_model_close(m);
}


/* ---- scopes and per-op hints (OI_SCOPE, OI_WITH) ---- */
/* One computation written twice: plain, and in scopes with every hint.
 * With a = [0.5, 1, -2, 10] and x = [1, 2, 3, 4]:
 * t0 = x + a = [1.5, 3, 1, 14]; t1 = relu(t0 * -1) = 0; y = y0 * (t0 + t1). */
OI_GRAPH(g_plain,
  OI_DYNAMIC( OI_VAR(x, f32[B]) )
  OI_VOLATILE( OI_VAR(a, f32[B]) OI_VAR(y, f32[B], @init(5.0)) )
  OI_BLOCK(entry,
    OI_ASSIGN(t0, f32[B])
    OI_ASSIGN(t1, f32[B])
    OI_OP(add, x, a) OI_TO(t0)
    OI_OP(mul, t0, -1.0) OI_TO(t1)
    OI_OP(relu, t1) OI_TO(t1)
    OI_OP(add, t0, t1) OI_TO(t1)
    OI_OP(mul, y, t1) OI_TO(y)
    OI_RETURN()
  )
)

OI_GRAPH(g_hinted,
  OI_DYNAMIC( OI_VAR(x, f32[B]) )
  OI_VOLATILE( OI_VAR(a, f32[B]) OI_VAR(y, f32[B], @init(5.0)) )
  OI_BLOCK(entry,
    OI_ASSIGN(t0, f32[B])
    OI_ASSIGN(t1, f32[B])
    OI_SCOPE(encoder,
      OI_SCOPE(layer0,
        OI_OP(add, x, a) OI_WITH(placement="cpu", fuse=false) OI_TO(t0)
        OI_OP(mul, t0, -1.0) OI_WITH(group="ffn", no_reorder=true) OI_TO(t1)
      )
      OI_OP(relu, t1) OI_WITH(fuse=true, group="ffn") OI_TO(t1)
    )
    OI_OP(add, t0, t1) OI_WITH(placement="gpu") OI_TO(t1)
    OI_OP(mul, y, t1) OI_WITH(placement="cpu") OI_TO(y)
    OI_RETURN()
  )
)

/* The plain graph with its ops placed on a device backend (Vulkan). */
OI_GRAPH(g_on_device,
  OI_DYNAMIC( OI_VAR(x, f32[B]) )
  OI_VOLATILE( OI_VAR(a, f32[B]) OI_VAR(y, f32[B], @init(5.0)) )
  OI_BLOCK(entry,
    OI_ASSIGN(t0, f32[B])
    OI_ASSIGN(t1, f32[B])
    OI_OP(add, x, a) OI_WITH(placement="vulkan") OI_TO(t0)
    OI_OP(mul, t0, -1.0) OI_TO(t1)
    OI_OP(relu, t1) OI_WITH(placement="gpu") OI_TO(t1)
    OI_OP(add, t0, t1) OI_TO(t1)
    OI_OP(mul, y, t1) OI_WITH(placement="vulkan") OI_TO(y)
    OI_RETURN()
  )
)

/* f32[4] + f32[3] does not broadcast: a validation error inside a scope */
static const int scoped_bad_line = __LINE__ + 6;
OI_GRAPH(g_scoped_bad,
  OI_DYNAMIC( OI_VAR(x, f32[B]) OI_VAR(z, f32[3]) )
  OI_BLOCK(entry,
    OI_ASSIGN(t0, f32[B])
    OI_SCOPE(head,
      OI_OP(add, x, z) OI_TO(t0)
    )
    OI_RETURN()
  )
)

static bool hint_unavailable; /* the last run_hint_graph warned "placement ... is not available" */

static void run_hint_graph(oi_device dev, const oi_graph *g, float *out, char **trace) {
    oi_model *m = minimal_model();
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = dev;
    desc.trace = true;
    desc.timer = true; /* device ops carry gpu_micros in the trace */
    oi_simulator *sim = oi_simulator_new_desc(m, &desc);
    CHECK_MSG(sim != NULL, "simulator: %s", oi_last_error());
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g) : NULL;
    CHECK_MSG(!sim || e != NULL, "make_executor: %s", oi_last_error());
    hint_unavailable = false;
    for (size_t i = 0; e && i < oi_executor_warning_count(e); i++)
        hint_unavailable |= strstr(oi_executor_warning(e, i), "is not available") != NULL;
    float x[4] = {1, 2, 3, 4};
    for (int step = 0; e && step < 2; step++) {
        CHECK_OK(OI_TRY_INSERT(e, x, x, 4));
        CHECK_OK(oi_executor_run_step(e));
    }
    oi_tensor_view v;
    if (e && oi_executor_fetch(e, "y", OI_DTYPE_F32, &v) == OI_OK && v.len == 4)
        memcpy(out, v.data, sizeof(float) * 4);
    if (trace)
        *trace = e ? oi_executor_trace_json(e) : NULL;
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
}

static void test_scopes_and_hints(void) {
    /* y is volatile (5.0 again each step): y = 5 * t0 */
    const float want[4] = {7.5f, 15.0f, 5.0f, 70.0f};
    float plain[4] = {0}, hinted[4] = {0};
    char *trace = NULL;
    run_hint_graph(OI_DEVICE_CPU, g_plain(), plain, NULL);
    run_hint_graph(OI_DEVICE_CPU, g_hinted(), hinted, &trace);
    for (int i = 0; i < 4; i++) {
        CHECK_MSG(plain[i] == want[i], "plain y[%d] = %g, want %g", i, (double)plain[i], (double)want[i]);
        CHECK_MSG(hinted[i] == plain[i], "hinted y[%d] = %g, plain %g", i, (double)hinted[i], (double)plain[i]);
    }
    /* every event of a scoped node names its scope; the others have none */
    CHECK_STR_CONTAINS(trace, "\"scope\": \"encoder/layer0\"");
    CHECK_STR_CONTAINS(trace, "\"scope\": \"encoder\"");
    const char *last_add = trace ? strstr(trace, "\"node_index\": 5,") : NULL;
    const char *next = last_add ? strstr(last_add, "\"micros\"") : NULL;
    const char *scope = last_add ? strstr(last_add, "\"scope\"") : NULL;
    CHECK_MSG(last_add && next && (!scope || scope > next), "the node outside scopes has no scope field");
    oi_free(trace);
    /* validation errors name the scope beside file:line */
    oi_model *bad_model = minimal_model();
    CHECK(oi_graph_validate(g_scoped_bad(), bad_model) != OI_OK);
    char where[256];
    snprintf(where, sizeof where, "%s:%d: error: in scope head: OI_OP(add, x, z) OI_TO(t0): ", __FILE__, scoped_bad_line);
    CHECK_STR_CONTAINS(oi_last_error(), where);
    oi_model_close(bad_model);
    oi_backend_info infos[8];
    size_t n = oi_backends_discover(infos, 8);
    bool vulkan = false;
    for (size_t i = 0; i < n && i < 8; i++)
        vulkan |= strcmp(infos[i].name, "vulkan") == 0 && infos[i].available;
    /* placement="gpu" on a CPU simulator: the node goes to Vulkan where there
     * is one; elsewhere that is said, and the node runs on the CPU */
    oi_model *m = minimal_model();
    oi_simulator *sim = NULL;
    oi_executor *e = make_exec(&sim, m, g_hinted(), false);
    bool said = false;
    for (size_t i = 0; e && i < oi_executor_warning_count(e); i++)
        said |= strstr(oi_executor_warning(e, i), "placement \"gpu\" is not available: the simulator runs on cpu") != NULL;
    CHECK_MSG(said == !vulkan, "placement warning: %d", (int)said);
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
    /* a CPU simulator with ops placed on Vulkan, and on Vulkan (lavapipe
     * here) placement="cpu" nodes between device ops: the data moves, the
     * values do not change */
    float cpu_placed[4] = {0};
    run_hint_graph(OI_DEVICE_CPU, g_on_device(), cpu_placed, NULL);
    CHECK_MSG(hint_unavailable == !vulkan, "placement=\"vulkan\" on a CPU simulator: %s",
              vulkan ? "warned although Vulkan is here" : "no warning without Vulkan");
    for (int i = 0; i < 4; i++)
        CHECK_MSG(cpu_placed[i] == want[i], "CPU simulator, Vulkan-placed y[%d] = %g, want %g", i, (double)cpu_placed[i],
                  (double)want[i]);
    if (!vulkan) {
        printf("scopes and hints: no Vulkan device, the CPU half only\n");
        return;
    }
    float vk_plain[4] = {0}, vk_hinted[4] = {0};
    char *vk_trace = NULL;
    run_hint_graph(OI_DEVICE_VULKAN, g_plain(), vk_plain, NULL);
    run_hint_graph(OI_DEVICE_VULKAN, g_hinted(), vk_hinted, &vk_trace);
    /* node 2 (add, placement="cpu") has no GPU time where device ops have one */
    if (vk_trace && strstr(vk_trace, "gpu_micros")) {
        const char *placed = strstr(vk_trace, "\"node_index\": 2,");
        const char *after = placed ? strstr(placed + 1, "\"node_index\"") : NULL;
        const char *gpu = placed ? strstr(placed, "gpu_micros") : NULL;
        CHECK_MSG(placed && (!gpu || (after && gpu > after)), "the placement=\"cpu\" node ran on the device");
    }
    oi_free(vk_trace);
    for (int i = 0; i < 4; i++) {
        CHECK_MSG(vk_plain[i] == want[i], "vulkan plain y[%d] = %g, want %g", i, (double)vk_plain[i], (double)want[i]);
        CHECK_MSG(vk_hinted[i] == vk_plain[i], "vulkan hinted y[%d] = %g, plain %g", i, (double)vk_hinted[i],
                  (double)vk_plain[i]);
    }
}


int main(void) {
    test_minimal();
    test_sizes_in_settings();
    test_sizes_in_settings_errors();
    test_lenient_and_strict();
    test_strict_graph();
    test_literal_inputs();
    test_memory_kinds();
    test_lazy_loading();
    test_prefix_tables();
    test_kv_cache();
    test_slices();
    test_slice_exprs();
    test_runtime_dims();
    test_typed_by_op();
    test_entry_dims();
    test_reset_multi_index();
    test_fixed_overflow();
    test_auto_dim();
    test_control_flow();
    test_yield_await();
    test_links_and_aliases();
    test_iterate_and_trace();
    test_validation_errors();
    test_conformance();
    test_v2_models();
    test_backends();
    test_scopes_and_hints();
    return check_result("test_executor");
}
