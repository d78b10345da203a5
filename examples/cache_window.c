/* cache_window.c - a moving average over the last 3 steps with a cache table
 * and slices: every step appends x to A(i), and once 3 values are cached the
 * window start slides (a branch on a comparison decides). The window is the
 * slice A[start..n].
 *
 *   ./build/examples/cache_window */
#include "../openinfer.h"

#include <stdio.h>

OI_GRAPH(window,
  OI_DYNAMIC( OI_VAR(x, f32[2]) )
  OI_CONSTANT( OI_VAR(width, i32, @init(3)) )
  OI_PERSISTENT(
    OI_VAR(n, i32, @init(0))          /* values cached so far     */
    OI_VAR(start, i32, @init(0))      /* first value of the window */
    OI_VAR(A(i), f32[2], @table)
  )
  OI_BLOCK(entry,
    OI_ASSIGN(count, i32)
    OI_ASSIGN(full, bool)
    OI_ASSIGN(win, f32[1, 2])
    OI_ASSIGN(avg, f32[2])
    OI_CACHE_WRITE(x, A[n])
    OI_CACHE_INCREMENT(n)
    OI_CACHE_READ(n, count)
    OI_OP(gt, count, width) OI_TO(full)
    OI_BRANCH(full, slide, keep)
    OI_CACHE_READ(A[start..n], win)
    OI_OP(mean_axis, win, axes=[0]) OI_TO(avg)
    OI_RETURN()
  )
  OI_BLOCK(slide,
    OI_CACHE_INCREMENT(start)
    OI_RETURN()
  )
  OI_BLOCK(keep,
    OI_RETURN()
  )
)

int main(void) {
    oi_simulator *sim = oi_simulator_new(NULL, OI_DEVICE_AUTO);
    oi_executor *exec = sim ? oi_simulator_make_executor(sim, window()) : NULL;
    int rc = exec ? 0 : 1;
    for (int step = 0; step < 6 && !rc; step++) {
        float x[2] = {(float)(step * step), (float)step};
        OI_INSERT(exec, x, x, 2);
        if (oi_executor_run_step(exec) != OI_OK) {
            rc = 1;
            break;
        }
        OI_FETCH(exec, win, f32);
        OI_FETCH(exec, avg, f32);
        printf("step %d: x = [%g, %g], window of %lld, average = [%g, %g]\n", step, (double)x[0], (double)x[1],
               (long long)win.shape[0], (double)avg.data[0], (double)avg.data[1]);
    }
    if (rc)
        fprintf(stderr, "cache_window: %s\n", oi_last_error());
    oi_executor_free(exec);
    oi_simulator_free(sim);
    return rc;
}
