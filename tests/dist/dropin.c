/* dropin.c - a program that uses OpenInfer as a user who copied only
 * dist/openinfer.h into their folder would: one include, no include path.
 * It writes a small model, runs the minimal graph on it and checks y. */
#define OPENINFER_IMPLEMENTATION
#include "openinfer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

OI_GRAPH(dropin,
  OI_DYNAMIC( OI_VAR(x, f32[B]) )
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

static int write_model(const char *path) {
    const float a[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    const uint64_t dims[1] = {4};
    oi_writer *w = oi_writer_new();
    int ok = w && oi_writer_add_sizevar(w, "B", 4) == OI_OK &&
             oi_writer_add_tensor(w, "a", OI_DTYPE_F32, 1, dims, a, NULL) == OI_OK &&
             oi_writer_write_file(w, 2, path) == OI_OK;
    oi_writer_free(w);
    return ok;
}

/* The drop-in is compiled without OPENINFER_BLAS: asking for the BLAS
 * backend is a clear error, and discovery says why it is absent. */
static int check_no_blas(void) {
    oi_backend_info infos[16];
    size_t n = oi_backends_discover(infos, 16);
    int listed = 0;
    for (size_t i = 0; i < n && i < 16; i++)
        listed |= strcmp(infos[i].name, "blas") == 0 && !infos[i].available &&
                  strstr(infos[i].unavailable_reason, "built without BLAS") != NULL;
    oi_simulator *s = oi_simulator_new(NULL, OI_DEVICE_BLAS);
    int refused = s == NULL && strstr(oi_last_error(), "BLAS backend unavailable") != NULL;
    oi_simulator_free(s);
    if (!listed || !refused)
        fprintf(stderr, "dropin: blas listed %d refused %d: %s\n", listed, refused, oi_last_error());
    return listed && refused;
}

int main(void) {
    if (!check_no_blas())
        return 1;
    if (!dropin()) {
        fprintf(stderr, "graph: %s\n", oi_last_error());
        return 1;
    }
    if (!write_model("dropin.oinf")) {
        fprintf(stderr, "model: %s\n", oi_last_error());
        return 1;
    }
    oi_model *m = oi_model_open("dropin.oinf");
    oi_simulator *s = m ? oi_simulator_new(m, OI_DEVICE_CPU) : NULL;
    oi_executor *e = s ? oi_simulator_make_executor(s, dropin()) : NULL;
    const float x[4] = {0.5f, -2.0f, 1.0f, 0.0f};
    oi_status st = e ? OI_TRY_INSERT(e, x, x, 4) : OI_ERROR_RUNTIME;
    if (st == OI_OK)
        st = oi_executor_run_step(e);
    OI_TRY_FETCH(e, y, f32, &st);
    /* y = 5 * (x + a), computed by hand */
    const float want[4] = {7.5f, 0.0f, 20.0f, 20.0f};
    int bad = st != OI_OK || y.len != 4;
    for (size_t i = 0; !bad && i < 4; i++)
        bad = fabsf(y.data[i] - want[i]) > 1e-6f;
    if (bad)
        fprintf(stderr, "dropin failed: %s\n", oi_last_error());
    else
        printf("dropin: y = [%g, %g, %g, %g]\n", y.data[0], y.data[1], y.data[2], y.data[3]);
    oi_executor_free(e);
    oi_simulator_free(s);
    oi_model_close(m);
    return bad;
}
