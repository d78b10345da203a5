/* bench_executor.c - per-node overhead of the simulator.
 *
 * Runs a graph of N tiny ops (add of two f32[1] values) and reports the
 * wall time per node: the cost of the executor around a kernel that does
 * almost nothing. Three shapes of the same work:
 *   flat   N op statements in the entry block
 *   loop   one op inside OI_LOOP(l, i, 0..N)
 *   trace  flat, with the trace recorded
 *
 *   build/bench/bench_executor [N] [steps]     (defaults 10000 and 20) */
#include "../openinfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The statements of: volatile { one: f32[1] @init(1.0); t: f32[1]; } entry { N x add(t, one) >> t } */
static oi_graph *build_flat(int n, bool loop) {
    int count = 0, cap = 2 * n + 16;
    oi_dsl_stmt *s = (oi_dsl_stmt *)calloc((size_t)cap, sizeof *s);
    if (!s)
        return NULL;
#define PUSH(k, h, t, o) do { s[count].kind = k; s[count].line = count + 1; s[count].head = h; \
                              s[count].text = t; s[count].op = o; count++; } while (0)
    PUSH(OI_DSL_SECTION_VOLATILE, "", "", 0);
    PUSH(OI_DSL_VAR, "", "one, f32[1], @init(1.0)", 0);
    PUSH(OI_DSL_VAR, "", "t, f32[1]", 0);
    PUSH(OI_DSL_SECTION_END, "", "", 0);
    PUSH(OI_DSL_BLOCK, "entry", "", 0);
    if (loop) {
        static char range[64];
        snprintf(range, sizeof range, "i in 0..%d", n);
        PUSH(OI_DSL_LOOP, "repeat", range, 0);
        PUSH(OI_DSL_OP, "add", "t, one", (int)OI_OP_add);
        PUSH(OI_DSL_TO, "", "t", 0);
        PUSH(OI_DSL_LOOP_END, "repeat", "", 0);
    } else {
        for (int i = 0; i < n; i++) {
            if (count + 8 > cap)
                break;
            PUSH(OI_DSL_OP, "add", "t, one", (int)OI_OP_add);
            PUSH(OI_DSL_TO, "", "t", 0);
        }
    }
    PUSH(OI_DSL_RETURN, "", "", 0);
    PUSH(OI_DSL_BLOCK_END, "entry", "", 0);
    PUSH(OI_DSL_END, "", "", 0);
#undef PUSH
    oi_graph *g = oi_graph_build(loop ? "bench_loop" : "bench_flat", "bench_executor.c", s);
    free(s);
    return g;
}

static int run(const char *label, oi_graph *g, int n, int steps, bool trace) {
    if (!g) {
        fprintf(stderr, "%s: %s\n", label, oi_last_error());
        return 1;
    }
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = OI_DEVICE_CPU;
    desc.trace = trace;
    oi_simulator *sim = oi_simulator_new_desc(NULL, &desc);
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g) : NULL;
    if (!e) {
        fprintf(stderr, "%s: %s\n", label, oi_last_error());
        return 1;
    }
    oi_executor_run_step(e); /* warm up */
    double best = 1e30;
    for (int s = 0; s < steps; s++) {
        double t0 = now_s();
        if (oi_executor_run_step(e) != OI_OK) {
            fprintf(stderr, "%s: %s\n", label, oi_last_error());
            return 1;
        }
        double dt = now_s() - t0;
        if (dt < best)
            best = dt;
    }
    oi_tensor_view v;
    oi_executor_fetch(e, "t", OI_DTYPE_F32, &v);
    printf("%-6s %6d nodes: %8.1f ns/node (best of %d steps; t = %g)\n", label, n, best * 1e9 / n, steps,
           v.len ? (double)((float *)v.data)[0] : -1.0);
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_graph_free(g);
    return 0;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    int steps = argc > 2 ? atoi(argv[2]) : 20;
    if (n < 1 || steps < 1)
        return 2;
    int rc = run("flat", build_flat(n, false), n, steps, false);
    rc |= run("loop", build_flat(n, true), n, steps, false);
    rc |= run("trace", build_flat(n, false), n, steps > 3 ? 3 : steps, true);
    return rc;
}
