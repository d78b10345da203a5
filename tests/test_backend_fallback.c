/* test_backend_fallback.c - the executor's side of the backend seam, with a
 * fake device backend: ops it supports run there (results left "on the
 * device"), the others run on the CPU after to_host, with one warning per op
 * kind; fetch downloads first; a CPU write drops the device mirror. */
#include "../openinfer_impl/internal.h"
#include "../openinfer_impl/simulator.h"
#include "check.h"

static int fake_token, to_host_calls, release_calls, device_runs;
static const oi__backend fake_backend; /* tentative: defined below */

static void fake_discover(oi_backend_info *out, size_t max, size_t *count) { (void)out, (void)max, (void)count; }
static void *fake_create(int index) { (void)index; return &fake_token; }
static void fake_destroy(void *ctx) { (void)ctx; }

static bool fake_supports(void *ctx, oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__op_sig *inputs,
                          size_t n_inputs, const oi__op_sig *out) {
    (void)ctx, (void)attrs, (void)n_attrs, (void)inputs, (void)n_inputs, (void)out;
    return op == OI_OP_add;
}

/* "Runs on the device": computes on the host, then hides the result by
 * poisoning the host bytes until to_host restores them. */
static oi_status fake_run(void *ctx, oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__tensor *const *inputs,
                          size_t n_inputs, oi__tensor *out) {
    for (size_t i = 0; i < n_inputs; i++)
        CHECK_MSG(!inputs[i]->storage->host_stale || inputs[i]->storage->device_owner, "input %zu", i);
    oi_status st = oi__op_run_cpu(op, attrs, n_attrs, inputs, n_inputs, out);
    oi__storage *s = out->storage;
    float *saved = (float *)malloc(s->nbytes);
    memcpy(saved, s->data, s->nbytes);
    free(s->device);
    s->device = saved;
    s->device_owner = &fake_backend;
    s->device_ctx = ctx;
    memset(s->data, 0xff, s->nbytes); /* NaN: stale host bytes */
    s->host_stale = true;
    device_runs++;
    return st;
}

static oi_status fake_to_host(void *ctx, oi__storage *s) {
    (void)ctx;
    to_host_calls++;
    memcpy(s->data, s->device, s->nbytes);
    s->host_stale = false;
    return OI_OK;
}

static void fake_release(void *ctx, oi__storage *s) {
    (void)ctx;
    release_calls++;
    free(s->device);
    s->device = NULL;
}

static const oi__backend fake_backend = {
    "fake", fake_discover, fake_create, fake_destroy, fake_supports, fake_run, fake_to_host, fake_release, NULL, NULL, NULL, 0, NULL,
};

OI_GRAPH(g_mixed,
  OI_DYNAMIC( OI_VAR(x, f32[3]) )
  OI_CONSTANT( OI_VAR(two, f32, @init(2.0)) )
  OI_VOLATILE( OI_VAR(a, f32[3]) OI_VAR(b, f32[3]) OI_VAR(c, f32[3]) )
  OI_BLOCK(entry,
    OI_OP(add, x, two) OI_TO(a)
    OI_OP(mul, a, two) OI_TO(b)
    OI_OP(mul, b, two) OI_TO(b)
    OI_OP(add, b, a) OI_TO(c)
    OI_RETURN()
  )
)

int main(void) {
    oi_simulator *sim = oi_simulator_new(NULL, OI_DEVICE_CPU);
    CHECK(sim != NULL);
    if (!sim)
        return check_result("test_backend_fallback");
    sim->backend = &fake_backend;
    sim->backend_ctx = &fake_token;
    oi_executor *e = oi_simulator_make_executor(sim, g_mixed());
    CHECK_MSG(e != NULL, "%s", oi_last_error());
    float x[3] = {1, 2, 3};
    CHECK_OK(oi_executor_insert(e, "x", OI_DTYPE_F32, x, 3));
    CHECK_OK(oi_executor_run_step(e));
    CHECK_EQ_INT(device_runs, 2);         /* both adds */
    CHECK(to_host_calls >= 1);            /* a before the CPU mul */
    /* a = x + 2 = [3,4,5]; b = 4a = [12,16,20]; c = b + a = [15,20,25] */
    oi_tensor_view v;
    CHECK_OK(oi_executor_fetch(e, "c", OI_DTYPE_F32, &v));
    const float want[3] = {15, 20, 25};
    for (int i = 0; i < 3; i++)
        CHECK_NEAR(((const float *)v.data)[i], want[i], 0);
    CHECK_OK(oi_executor_fetch(e, "a", OI_DTYPE_F32, &v));
    CHECK_NEAR(((const float *)v.data)[2], 5.0, 0);
    CHECK_EQ_INT(oi_executor_warning_count(e), 1); /* mul, once */
    CHECK_STR_CONTAINS(oi_executor_warning(e, 0), "op mul ran on the CPU");
    CHECK_STR_CONTAINS(oi_executor_warning(e, 0), "fake");
    CHECK(oi_executor_warning(e, 1) == NULL);
    oi_executor_free(e);
    CHECK(release_calls >= 1);            /* freed device mirrors were released */
    sim->backend = &oi__cpu_backend;
    oi_simulator_free(sim);
    return check_result("test_backend_fallback");
}
