/* test_builder.c - the function API under the macros builds the same graph
 * as the macros (same JSON apart from source places) and reports mistakes
 * at the builder's line numbers. */
#include "../openinfer.h"
#include "check.h"

#include <stdlib.h>

OI_GRAPH(by_macro,
  OI_DYNAMIC( OI_VAR(x, f32[4]) )
  OI_VOLATILE( OI_VAR(y, f32[4], @init(2.0)) )
  OI_BLOCK(entry,
    OI_LOOP(twice, i, 0..2,
      OI_OP(mul, y, x) OI_TO(y)
    )
    OI_RETURN()
  )
)

static oi_graph *build_same_graph(void) {
    oi_graph_builder *b = oi_graph_builder_new("by_macro", "builder.c");
    oi_graph_builder_section(b, OI_DSL_SECTION_DYNAMIC);
    oi_graph_builder_var(b, "x, f32[4]");
    oi_graph_builder_end(b);
    oi_graph_builder_section(b, OI_DSL_SECTION_VOLATILE);
    oi_graph_builder_var(b, "y, f32[4], @init(2.0)");
    oi_graph_builder_end(b);
    oi_graph_builder_block(b, "entry");
    oi_graph_builder_loop(b, "twice", "i", "0..2");
    oi_graph_builder_op(b, "mul", "y, x", "y");
    oi_graph_builder_end(b);
    oi_graph_builder_stmt(b, OI_DSL_RETURN, "", "");
    oi_graph_builder_end(b);
    return oi_graph_builder_finish(b);
}

/* The JSON with every "file" and "line" value blanked out (free with free). */
static char *json_without_places(const oi_graph *g) {
    char *json = oi_graph_to_json(g);
    char *out = json ? (char *)malloc(strlen(json) + 16) : NULL;
    char *o = out;
    for (const char *p = json; out && *p;) {
        if (strncmp(p, "\"line\": ", 8) == 0) {
            o += sprintf(o, "\"line\": 0"), p += 8;
            while (*p >= '0' && *p <= '9')
                p++;
        } else if (strncmp(p, "\"file\": \"", 9) == 0) {
            o += sprintf(o, "\"file\": \""), p += 9;
            while (*p && *p != '"')
                p++;
        } else {
            *o++ = *p++;
        }
    }
    if (o)
        *o = '\0';
    oi_free(json);
    return out;
}

static void test_same_graph_as_macros(void) {
    CHECK(by_macro() != NULL);
    oi_graph *built = build_same_graph();
    CHECK_MSG(built != NULL, "%s", oi_last_error());
    if (!built || !by_macro())
        return;
    char *a = json_without_places(by_macro()), *b = json_without_places(built);
    CHECK_MSG(a && b && strcmp(a, b) == 0, "\nmacros:  %s\nbuilder: %s", a ? a : "", b ? b : "");
    CHECK_STR_CONTAINS(b, "\"twice\"");
    free(a);
    free(b);
    oi_graph_free(built);
}

static void test_errors_name_builder_lines(void) {
    oi_graph_builder *b = oi_graph_builder_new("broken", "app.c");
    oi_graph_builder_block(b, "entry");
    oi_graph_builder_at(b, 42);
    oi_graph_builder_stmt(b, OI_DSL_OP, "add", "x, x"); /* no OI_TO follows */
    oi_graph_builder_end(b);
    CHECK(oi_graph_builder_finish(b) == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "app.c:42: error:");

    b = oi_graph_builder_new("broken2", "app.c");
    CHECK_STATUS(oi_graph_builder_stmt(b, OI_DSL_OP, "no_such_op", "x"), OI_ERROR_VALIDATION);
    CHECK_STR_CONTAINS(oi_last_error(), "unknown op 'no_such_op'");
    CHECK_STATUS(oi_graph_builder_end(b), OI_ERROR_INVALID_ARGUMENT);
    oi_graph_builder_free(b);
    CHECK(oi_graph_builder_new("", "x.c") == NULL);
}

static void test_builder_graph_runs(void) {
    oi_graph *g = build_same_graph();
    oi_writer *w = oi_writer_new();
    uint8_t *bytes = NULL;
    size_t size = 0;
    CHECK_OK(oi_writer_to_memory(w, 2, &bytes, &size));
    oi_writer_free(w);
    oi_model *m = bytes ? oi_model_open_memory(bytes, size) : NULL;
    oi_simulator *s = m ? oi_simulator_new(m, OI_DEVICE_CPU) : NULL;
    oi_executor *e = s && g ? oi_simulator_make_executor(s, g) : NULL;
    CHECK_MSG(e != NULL, "%s", oi_last_error());
    if (e) {
        const float x[4] = {1, 2, 3, -1};
        CHECK_OK(oi_executor_insert(e, "x", OI_DTYPE_F32, x, 4));
        CHECK_OK(oi_executor_run_step(e));
        oi_tensor_view y;
        CHECK_OK(oi_executor_fetch(e, "y", OI_DTYPE_F32, &y));
        const float want[4] = {2, 8, 18, 2}; /* 2 * x * x, by hand */
        for (int i = 0; i < 4; i++)
            CHECK_NEAR(((float *)y.data)[i], want[i], 0);
    }
    oi_executor_free(e);
    oi_simulator_free(s);
    oi_model_close(m);
    oi_free(bytes);
    oi_graph_free(g);
}

int main(void) {
    test_same_graph_as_macros();
    test_errors_name_builder_lines();
    test_builder_graph_runs();
    return check_result("test_builder");
}
