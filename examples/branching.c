/* branching.c - a guarded layer: branch on is_finite to a "good" or a "bad"
 * block, stepping through the nodes to show which path ran.
 *
 *   ./build/examples/branching */
#include "../openinfer.h"

#include <math.h>
#include <stdio.h>

OI_GRAPH(guarded,
  OI_DYNAMIC( OI_VAR(x, f32[1, 3]) )
  OI_CONSTANT( OI_VAR(W, f32[3, 3], @init(0.5)) )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[1, 3])
    OI_ASSIGN(ok, bool)
    OI_OP(matmul, x, W) OI_TO(h)
    OI_OP(is_finite, h) OI_TO(ok)
    OI_BRANCH(ok, good, bad)
    OI_RETURN()
  )
  OI_BLOCK(good,
    OI_OP(relu, h, negative_slope=0.0, clamp_max=6.0) OI_TO(h)
    OI_RETURN()
  )
  OI_BLOCK(bad,
    OI_OP(fill_nan_like, h, value=0.0) OI_TO(h)
    OI_RETURN()
  )
)

static int run(oi_executor *exec, const float *input) {
    OI_INSERT(exec, x, input, 3);
    if (oi_executor_iterate(exec) != OI_OK)
        return 1;
    oi_event ev;
    oi_status st;
    while ((st = oi_executor_next(exec, &ev)) == OI_OK)
        printf("  [%s] %s\n", ev.block_name, ev.description);
    if (st != OI_ERROR_NOT_FOUND)
        return 1;
    OI_FETCH(exec, h, f32);
    printf("  h = [%g, %g, %g]\n", (double)h.data[0], (double)h.data[1], (double)h.data[2]);
    return 0;
}

int main(void) {
    oi_simulator *sim = oi_simulator_new(NULL, OI_DEVICE_AUTO);
    oi_executor *exec = sim ? oi_simulator_make_executor(sim, guarded()) : NULL;
    int rc = exec ? 0 : 1;
    const float finite[3] = {1, 2, 20}, broken[3] = {1, NAN, 3};
    if (!rc) {
        printf("finite input:\n");
        rc = run(exec, finite);
    }
    if (!rc) {
        printf("input with a NaN:\n");
        rc = run(exec, broken);
    }
    if (rc)
        fprintf(stderr, "branching: %s\n", oi_last_error());
    oi_executor_free(exec);
    oi_simulator_free(sim);
    return rc;
}
