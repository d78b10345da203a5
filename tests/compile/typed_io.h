/* typed_io.h - OI_INSERT takes the dtype from the pointer, OI_FETCH takes
 * any dtype name (bool too, which C's <stdbool.h> makes a macro), and a
 * failed graph's NULL carries its build message into make_executor. Built
 * as C11 (compile_c11.c) and C++17 (compile_cpp17.cpp), each including
 * <stdbool.h> first, as an application would. Expected values are written
 * out by hand. */
#include "../check.h"

OI_GRAPH(typed_io,
  OI_DYNAMIC(
    OI_VAR(q, i8[N])
    OI_VAR(w, f64[N])
    OI_VAR(big, i64[N])
    OI_VAR(h, u16[N])
    OI_VAR(flags, bool[N])
  )
  OI_VOLATILE(
    OI_VAR(unset, bool[N])
    OI_VAR(qf, f32[N])
  )
  OI_BLOCK(entry,
    OI_OP(not, flags) OI_TO(unset)
    OI_OP(cast, q, to=f32) OI_TO(qf)
    OI_RETURN()
  )
)

/* One mistake: the dtype f33 (the line below is checked). */
OI_GRAPH(typed_io_broken,
  OI_DYNAMIC(OI_VAR(x, f33[N]))
  OI_BLOCK(entry, OI_RETURN())
)
#define TYPED_IO_BROKEN_LINE 30

static oi_model *typed_io_model(uint8_t **bytes) {
    oi_writer *w = oi_writer_new();
    size_t size = 0;
    CHECK_OK(oi_writer_add_sizevar(w, "N", 4));
    CHECK_OK(oi_writer_to_memory(w, 2, bytes, &size));
    oi_writer_free(w);
    oi_model *m = *bytes ? oi_model_open_memory(*bytes, size) : NULL;
    CHECK_MSG(m != NULL, "model: %s", oi_last_error());
    return m;
}

static void typed_io_run(oi_executor *e) {
    const int8_t q_in[4] = {-128, -3, 5, 127};
    double w_in[4] = {1.5, -2.0, 0.1, 1e300}; /* 0.1 and 1e300 are not f32 values */
    int64_t big_in[4] = {((int64_t)1 << 40) + 1, -1, INT64_MAX, INT64_MIN};
    uint16_t h_in[4] = {65535, 0, 1, 40000};
    bool flags_in[4] = {true, false, true, true};
    CHECK_OK(OI_TRY_INSERT(e, q, q_in, 4)); /* const int8_t * -> i8 */
    CHECK_OK(OI_TRY_INSERT(e, w, w_in, 4)); /* double * -> f64 */
    CHECK_OK(OI_TRY_INSERT(e, big, big_in, 4));
    CHECK_OK(OI_TRY_INSERT(e, h, h_in, 4));
    CHECK_OK(OI_TRY_INSERT(e, flags, flags_in, 4));
    OI_INSERT(e, flags, flags_in, 4); /* the panic form, same inference */
    CHECK_OK(oi_executor_run_step(e));

    OI_FETCH(e, unset, bool);
    CHECK_EQ_INT(unset.len, 4);
    CHECK(unset.len == 4 && !unset.data[0] && unset.data[1] && !unset.data[2] && !unset.data[3]);
    OI_FETCH(e, w, f64);
    CHECK(w.len == 4 && w.data[0] == 1.5 && w.data[1] == -2.0 && w.data[2] == 0.1 && w.data[3] == 1e300);
    oi_status st = OI_ERROR_RUNTIME;
    OI_TRY_FETCH(e, flags, bool, &st);
    CHECK_OK(st);
    CHECK(flags.len == 4 && flags.data[0] && !flags.data[1] && flags.data[2] && flags.data[3]);
    OI_FETCH(e, qf, f32);
    CHECK(qf.len == 4 && qf.data[0] == -128.0f && qf.data[1] == -3.0f && qf.data[2] == 5.0f && qf.data[3] == 127.0f);
    OI_FETCH(e, big, i64); /* 2^40 + 1 survives only if it never went through f32 */
    CHECK(big.len == 4 && big.data[0] == 1099511627777LL && big.data[1] == -1 && big.data[2] == INT64_MAX &&
          big.data[3] == INT64_MIN);
    OI_FETCH(e, h, u16);
    CHECK(h.len == 4 && h.data[0] == 65535 && h.data[1] == 0 && h.data[2] == 1 && h.data[3] == 40000);
    OI_FETCH(e, q, i8);
    CHECK(q.len == 4 && q.data[0] == -128 && q.data[1] == -3 && q.data[2] == 5 && q.data[3] == 127);
    /* float data never becomes an integer silently, named or inferred */
    const float qf_in[4] = {1.0f, 2.0f, -3.0f, 4.0f};
    CHECK_STATUS(OI_TRY_INSERT_T(e, q, f32, qf_in, 4), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(OI_TRY_INSERT(e, q, qf_in, 4), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(oi_last_error(), "expected i8, got f32");
    /* integers widen: i8 data into the f64 variable */
    CHECK_OK(OI_TRY_INSERT(e, w, q_in, 4));
}

/* The NULL that a failed graph's accessor returns says why it failed. */
static void typed_io_broken_graph(oi_simulator *sim) {
    char where[256];
    snprintf(where, sizeof where, "typed_io.h:%d: error:", TYPED_IO_BROKEN_LINE);
    oi_clear_error();
    oi_executor *e = oi_simulator_make_executor(sim, typed_io_broken());
    CHECK(e == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), where);
    CHECK_STR_CONTAINS(oi_last_error(), "unknown dtype f33");
    CHECK(strstr(oi_last_error(), "no graph") == NULL);
    oi_executor_free(e);
}

static int typed_io_check(const char *name) {
    uint8_t *bytes = NULL;
    oi_model *m = typed_io_model(&bytes);
    oi_simulator *sim = m ? oi_simulator_new(m, OI_DEVICE_CPU) : NULL;
    CHECK_MSG(sim != NULL, "simulator: %s", oi_last_error());
    oi_executor *e = sim ? oi_simulator_make_executor(sim, typed_io()) : NULL;
    CHECK_MSG(e != NULL, "make_executor: %s", oi_last_error());
    if (e)
        typed_io_run(e);
    if (sim)
        typed_io_broken_graph(sim);
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
    oi_free(bytes);
    return check_result(name);
}
