/* minimal.c - the minimal example of the design documents:
 *     y = 5 * (x + a)
 * with a: f32[B] from the model and x inserted by the program.
 *
 *   python3 examples/python/minimal_oinf.py res/minimal_model.oinf
 *   ./build/examples/minimal [res/minimal_model.oinf]
 *
 * OPENINFER_TRACE=1 also prints the trace of the step as JSON. */
#include "../openinfer.h"

#include <stdio.h>
#include <stdlib.h>

OI_GRAPH(minimal,
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

/* A small deterministic generator, so every run prints the same numbers. */
static float next_uniform(uint32_t *state, float lo, float hi) {
    *state = *state * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float)(*state >> 8) / 16777216.0f;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "res/minimal_model.oinf";
    oi_model *model = oi_model_open(path);
    if (!model) {
        fprintf(stderr, "%s\n(create it with: python3 examples/python/minimal_oinf.py %s)\n", oi_last_error(), path);
        return 1;
    }
    uint64_t len = 0;
    oi_simulator *sim = NULL;
    oi_executor *exec = NULL;
    float *input = NULL;
    int rc = 1;
    if (oi_model_size_of(model, "B", &len) != OI_OK)
        goto done;
    sim = oi_simulator_new(model, OI_DEVICE_AUTO);
    exec = sim ? oi_simulator_make_executor(sim, minimal()) : NULL;
    if (!exec)
        goto done;

    input = (float *)malloc((size_t)len * sizeof *input);
    if (!input)
        goto done;
    uint32_t seed = 42;
    for (uint64_t i = 0; i < len; i++)
        input[i] = next_uniform(&seed, -10.0f, 10.0f) + (float)i * 0.001f;

    OI_INSERT(exec, x, input, (size_t)len);
    if (oi_executor_run_step(exec) != OI_OK)
        goto done;

    OI_FETCH(exec, y, f32);
    size_t shown = y.len < 8 ? y.len : 8;
    printf("y[0..%zu] = [", shown);
    for (size_t i = 0; i < shown; i++)
        printf(i ? ", %.6f" : "%.6f", (double)y.data[i]);
    double checksum = 0.0;
    for (size_t i = 0; i < y.len; i++)
        checksum += (double)y.data[i];
    printf("]\nlen = %zu, checksum (sum of y) = %.6f\n", y.len, checksum);

    if (getenv("OPENINFER_TRACE")) {
        char *trace = oi_executor_trace_json(exec);
        if (trace)
            printf("%s", trace);
        oi_free(trace);
    }
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "minimal: %s\n", oi_last_error());
    free(input);
    oi_executor_free(exec);
    oi_simulator_free(sim);
    oi_model_close(model);
    return rc;
}
