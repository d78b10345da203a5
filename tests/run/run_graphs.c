/* run_graphs.c - writes the graphs that tests/run/cli_run.py runs through
 * `openinfer run`, as graph JSON (oi_graph_to_json), into a folder:
 *
 *   run_graphs OUTDIR   ->  OUTDIR/minimal.json, accumulate.json, mixed.json
 *
 * The test computes every expected value with numpy from the same inputs. */
#include "../../openinfer.h"

#include <stdio.h>

/* y = 5 * (x + a): the README's example. */
OI_GRAPH(minimal,
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

/* State across steps: acc += x * scale, n counts the steps. */
OI_GRAPH(accumulate,
  OI_DYNAMIC( OI_VAR(x, f32[B]) )
  OI_VOLATILE( OI_VAR(scale, f32[B]) )
  OI_PERSISTENT(
    OI_VAR(acc, f32[B], @init(0.0))
    OI_VAR(n, i32, @init(0))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(t, f32[B])
    OI_ASSIGN(sum, f32[B])
    OI_OP(mul, x, scale) OI_TO(t)
    OI_CACHE_READ(acc, sum)
    OI_OP(add, sum, t) OI_TO(sum)
    OI_CACHE_WRITE(sum, acc)
    OI_CACHE_INCREMENT(n)
    OI_RETURN()
  )
)

/* Every kind of .npy that goes in and out: i32 and i64, bool, f16, and
 * bf16 (which travels as f32). */
OI_GRAPH(mixed,
  OI_DYNAMIC(
    OI_VAR(t, i32[R, B])
    OI_VAR(h, f16[B])
    OI_VAR(v, bf16[B])
  )
  OI_VOLATILE(
    OI_VAR(w, i32[B])
    OI_VAR(p, i32[R, B])
    OI_VAR(big, bool[R, B])
    OI_VAR(wide, i64[R, B])
    OI_VAR(h2, f16[B])
    OI_VAR(r, bf16[B])
  )
  OI_BLOCK(entry,
    OI_OP(mul, t, w) OI_TO(p)
    OI_OP(gt, p, t) OI_TO(big)
    OI_OP(cast, p, to=i64) OI_TO(wide)
    OI_OP(add, h, h) OI_TO(h2)
    OI_OP(relu, v) OI_TO(r)
    OI_RETURN()
  )
)

static int write_graph(const char *dir, const char *name, const oi_graph *g) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    char *json = g ? oi_graph_to_json(g) : NULL;
    FILE *f = json ? fopen(path, "wb") : NULL;
    int ok = f && fputs(json, f) >= 0;
    ok = f && fclose(f) == 0 && ok;
    if (!ok)
        fprintf(stderr, "run_graphs: %s: %s\n", path, g ? "cannot write" : oi_last_error());
    oi_free(json);
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: run_graphs OUTDIR\n");
        return 2;
    }
    int ok = write_graph(argv[1], "minimal", minimal());
    ok = write_graph(argv[1], "accumulate", accumulate()) && ok;
    ok = write_graph(argv[1], "mixed", mixed()) && ok;
    return ok ? 0 : 1;
}
